"""Passwords a person types: in a command's flags and in a sentence.

A typed password has no shape of its own (``Qx7vR2mLk9Zt4Wn`` or ``hunter2``);
only where it is written says what it is. These rules name those places:

- the flags of commands that take a password on the command line: ``mysql
  -p<pw>`` (attached: ``mysql -p`` alone prompts, and ``-p db`` names a
  database), ``sshpass -p``, ``mongosh -p``, ``docker login -p``,
  ``redis-cli -a``, ``sqlcmd -P``, ``zip -P``, ``ldapsearch -w``,
  ``mosquitto_pub -P``, ``twine -p``, ``7z -p<pw>``, openssl's ``pass:<pw>``,
  ``--password <pw>`` of any command, and ``user:pw`` after ``curl -u`` (or
  ``--user``, httpie's ``-a``, wget's ``--user``) and ``user%pw`` after
  ``smbclient -U``;
- shell variables that hold one by name: ``PGPASSWORD=`` and ``MYSQL_PWD=``
  (also found by the keyword rules), ``SSHPASS=``, ``*_PASS=``,
  ``REDISCLI_AUTH=``;
- prose: ``the password is <pw>``, ``password for the staging db was <pw>``,
  ``log in with password <pw>``, ``the deploy key is <key>``.

Each rule is a regex whose group ``v`` is the secret, a trigger substring
that must be in the text before the regex runs (so text without one costs a
substring test), and a vet that tells a value from prose or a placeholder
(``-p$MYSQL_PWD``, ``password is required``).
"""

from __future__ import annotations

import re

from sleep.redact.rules import Rule, is_placeholder, unquote

# The secret after a verb: quoted (anything to the closing quote on the line) or a run of
# non-space characters that does not end in sentence punctuation. After a flag, the run
# keeps its last character (``-w LdapAdm1n!``).
_VALUE = r"""(?P<v>'[^'\n]{1,200}'|"[^"\n]{1,200}"|`[^`\n]{1,200}`|[^\s'"`]*[^\s'"`.,;:!?)\]])"""
_FLAG_VALUE = r"""(?P<v>'[^'\n]{1,200}'|"[^"\n]{1,200}"|[^\s'"`]+)"""
# The rest of one shell command before the flag: up to a separator of commands.
_SAME_COMMAND = r"[^;|&\n]{0,300}?"
_START = r"(?<![\w./-])"  # a command word starts here (not inside a path or a longer name)

# One regex for every command above: the command word, the rest of its command, the flag.
_COMMAND_FLAG_RX = re.compile(_START + r"(?:"
    r"(?:mysql(?:dump|admin|import|check|sh|pump|slap|binlog)?|mariadb(?:-?dump|-?admin|-?import|-?check)?"
    r"|7z[az]?|7zz|u?n?rar)\b" + _SAME_COMMAND + r"[ \t]-p(?=[^\s-])"  # attached: -p<pw>
    r"|sshpass\b" + _SAME_COMMAND + r"[ \t]-p[ \t]*"
    r"|(?:mongo(?:sh|dump|restore|export|import|stat|top|files)?|twine)\b" + _SAME_COMMAND + r"[ \t]-p[ \t]+"
    r"|(?:docker|podman|buildah|skopeo|oras|nerdctl|crane)[ \t]+login\b" + _SAME_COMMAND + r"[ \t]-p[ \t]+"
    r"|redis-cli\b" + _SAME_COMMAND + r"[ \t]-a[ \t]+"
    r"|(?:sqlcmd|bcp|osql|zip|unzip|mosquitto_(?:pub|sub|rr))\b" + _SAME_COMMAND + r"[ \t]-P[ \t]+"
    r"|ldap(?:search|add|modify|delete|passwd|whoami|compare|modrdn)\b" + _SAME_COMMAND + r"[ \t]-w[ \t]+"
    # user:pw after curl -u / --user, httpie -a; user%pw after smbclient -U
    r"|(?:curl|curlie|xh|xhs|wget|grpcurl|lftp|https?(?![:/.\w-]))\b" + _SAME_COMMAND +
    r"[ \t](?:-u|--user|-U|--proxy-user|-a|--auth)(?:[ \t]+|=)['\"]?[^\s:'\"]{1,128}:"
    r"|(?:smbclient|rpcclient|smbmap|smbget)\b" + _SAME_COMMAND +
    r"[ \t](?:-U|--user)(?:[ \t]+|=)['\"]?[^\s%'\"]{1,128}%"
    r")" + _FLAG_VALUE)
_LONG_FLAG_RX = re.compile(r"(?<!\S)--(?:\w+-)?(?:password|passwd|pass|pw)[ \t]+" + _FLAG_VALUE)
_OPENSSL_PASS_RX = re.compile(r"(?<![\w-])-(?:pass(?:in|out)?|passphrase)\s+pass:(?P<v>[^\s'\"]+)")
_PASS_VARIABLE_RX = re.compile(
    r"\b(?:(?:[A-Z][A-Z0-9]*_)*(?:SSHPASS|PASS|PASSPHRASE)|(?:[A-Z][A-Z0-9]*_)+AUTH)[ \t]*=[ \t]*" + _FLAG_VALUE)
_PASSWORD_IS_RX = re.compile(
    r"(?i)\b(?:passw(?:or)?d|passphrase|passcode|pwd|pw)s?"
    r"(?:\s+(?:for|of|on|to)\s+(?:the\s+|my\s+|our\s+|your\s+)?[\w.@:/-]{1,60}(?:\s+(?:db|database|server|account|user|box|vm))?)?"
    r"\s+(?:is|was|are|->|→)\s+(?:now\s+|still\s+|just\s+|simply\s+)?" + _VALUE)
_WITH_PASSWORD_RX = re.compile(
    r"(?i)\b(?:with|using|and)\s+(?:the\s+|my\s+)?(?:password|passphrase|passcode|pw)\s+" + _VALUE)
_KEY_IS_RX = re.compile(
    r"(?i)\b(?:(?:api|deploy|access|secret|signing|private|auth|license|master|encryption|session)[ _-]?key"
    r"|token|secret|credential)s?(?:\s+for\s+[\w.@:/-]{1,60})?\s+(?:is|was|->|→)\s+(?:now\s+|still\s+)?" + _VALUE)

_SYMBOL_OR_DIGIT = re.compile(r"[^A-Za-z\s]")
_DIGIT = re.compile(r"\d")
_LETTER = re.compile(r"[A-Za-z]")


def _flag_value(m: re.Match[str]) -> bool:
    """A value given to a password flag: anything but a placeholder."""
    value = unquote(m.group("v"))
    return bool(value) and not is_placeholder(value) and not value.startswith(("env:", "file:", "fd:", "stdin"))


def _variable_value(m: re.Match[str]) -> bool:
    """``DB_PASS=<pw>``, but not a test summary's ``PASS=3``."""
    value = unquote(m.group("v"))
    return _flag_value(m) and len(value) >= 4 and not value.isdigit()


def _said_password(m: re.Match[str]) -> bool:
    """``password is hunter2``: a quoted value, or a word with a digit or a symbol
    (``password is required``, ``is stored in 1Password`` are prose)."""
    raw = m.group("v")
    value = unquote(raw)
    if not _flag_value(m) or value.startswith(("/", "~", "./", "../", "http")):
        return False
    if raw != value:  # it was quoted
        return len(value) >= 3
    return len(value) >= 4 and _SYMBOL_OR_DIGIT.search(value) is not None


def _said_key(m: re.Match[str]) -> bool:
    """``the deploy key is <key>``: a value long enough, with letters and digits, that is
    not a path or a URL (``the token is in ~/.config/gh/hosts.yml``)."""
    value = unquote(m.group("v"))
    return _flag_value(m) and len(value) >= 12 and "/" not in value[:2] and not value.startswith("http") \
        and _DIGIT.search(value) is not None and _LETTER.search(value) is not None


_COMMANDS = ("mysql", "mariadb", "7z", "rar", "sshpass", "mongo", "twine", "login", "redis-cli", "sqlcmd", "bcp",
             "osql", "zip", "mosquitto", "ldap", "curl", "xh", "wget", "grpcurl", "lftp", "http", "smb", "rpcclient")
_VERBS = (" is ", " was ", " are ", "->", "→", " is\t", " was\t")

# (triggers, lowered, rule, regex, also), appended to :data:`sleep.redact.rules.TRIGGERED`.
# Every match lies within one line, and the regex only runs on a line that holds one of
# the triggers and one of ``also`` (the command rule's triggers are the flags it looks
# for, in lowercase: "-P" is "-p", "--user" holds "-u", "--auth" holds "-a"). Most lines that say "token" or "-a"
# name no command and no "is": they cost two substring tests.
TYPED_PASSWORD_RULES: list[tuple[tuple[str, ...], bool, Rule, re.Pattern[str], tuple[str, ...]]] = [
    (("-p", "-a", "-w", "-u"), True, Rule("password", _flag_value), _COMMAND_FLAG_RX, _COMMANDS),
    (("--",), True, Rule("password", _flag_value), _LONG_FLAG_RX, ("pass", "pw")),
    (("pass:",), False, Rule("password", _flag_value), _OPENSSL_PASS_RX, ()),
    (("PASS", "_AUTH"), False, Rule("password", _variable_value), _PASS_VARIABLE_RX, ("=",)),
    (("pass", "pw"), True, Rule("password", _said_password), _PASSWORD_IS_RX, _VERBS),
    (("pass", "pw"), True, Rule("password", _said_password), _WITH_PASSWORD_RX, ("with", "using", "and")),
    (("key", "token", "secret", "credential"), True, Rule("secret", _said_key), _KEY_IS_RX, _VERBS),
]
