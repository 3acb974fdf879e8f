"""Short signatures of shell commands: what was run, never with what values.

``shell_signatures("cd api && uv run pytest -q tests/ | tail -5")`` is
``["pytest -q"]``: one signature per command of the line, each the program
and either its subcommand (``git commit``, ``cargo test``, ``alembic revision``;
a second level for grouping subcommands: ``npm run build``, ``docker compose up``,
``gh pr create``) or, for a program without subcommands, its first flag
(``pytest -q``, ``ls -la``). Arguments are never kept, and a flag keeps only its
name (``--token=abc`` gives ``--token``), so a secret passed on the command
line cannot ride along; the caller still redacts the result.

What is looked through: environment assignments (``FOO=1 make``), wrappers
(``sudo``, ``env``, ``time``, ``timeout 30``, ``nohup``, ``xargs``, ``uv run``,
``poetry run``, ``npx``, ``pnpm exec``, ``bundle exec``, ``python -m``), shells
(``bash -lc "..."`` is parsed again), interpreters running a script
(``python manage.py migrate`` is ``manage.py migrate``), subshells and
``if``/``while`` conditions. What is dropped: navigation and shell plumbing
(``cd``, ``export``, ``source``, ``echo``), loop headers, heredoc bodies,
comments, and filters that follow a pipe (``| grep``, ``| tail``).

Pure functions of their input; they never raise.
"""

from __future__ import annotations

import re

MAX_COMMAND_CHARS = 20_000
MAX_SIGNATURES = 12

_TOKEN_RX = re.compile(r"""
    (?P<space>[ \t\r]+|\\\n)
  | (?P<comment>\#[^\n]*)
  | (?P<op>&&|\|\||;;|\|&|[;&|\n()])
  | (?P<redir>\d*(?:&>>|&>|>>|>&|<&|<<<|<<-|<<|<>|>\||>|<))
  | (?P<word>(?:\$\((?:[^()]|\([^()]*\))*\)?|[^\s'"\\;&|()<>`]+|'[^']*'?|"(?:[^"\\]|\\.)*"?|\\.?|`[^`]*`?)+)
""", re.X | re.S)
_UNQUOTE_RX = re.compile(r"""'([^']*)'?|"((?:[^"\\]|\\.)*)"?|\\(.)""", re.S)
_ASSIGNMENT_RX = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\+?=")
_PROGRAM_RX = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.+\-]{0,39}$")
_SUBCOMMAND_RX = re.compile(r"^[a-z][a-z0-9_\-]{0,31}(?::[a-z0-9_\-]{1,31})*$")
_SCRIPT_NAME_RX = re.compile(r"^[A-Za-z0-9_][\w:.\-]{0,39}$")
_LONG_FLAG_RX = re.compile(r"^--[A-Za-z][A-Za-z0-9\-]{0,31}")
_SHORT_FLAG_RX = re.compile(r"^-[A-Za-z]{1,4}$")
_SCRIPT_RX = re.compile(r"\.(?:py|pyw|js|mjs|cjs|ts|mts|rb|pl|php|sh|bash|zsh|ps1|lua|r|R|jl)$")
_WINDOWS_PATH_RX = re.compile(r"^[A-Za-z]:\\")
# An unquoted word whose every backslash is followed by a name character is a Windows
# path (``backend\app.py``, ``.\venv\Scripts\activate``), not shell escapes.
_BACKSLASH_PATH_RX = re.compile(r"^[^'\"\\]*(?:\\[A-Za-z0-9_.$\-][^'\"\\]*)+$")
# PowerShell parameters are whole words in Pascal case (``-Force``, ``-ItemType``).
_POWERSHELL_PARAM_RX = re.compile(r"^-[A-Z][a-z]+(?:[A-Z][a-z]*){0,3}$")
_PATH_SEP_RX = re.compile(r"[/\\]")
_HEREDOC_DELIM_RX = re.compile(r"""^['"]?([^'"\s]+)['"]?$""")

# Not work: moving around and shell plumbing.
NOISE = frozenset({
    "cd", "pushd", "popd", "export", "unset", "set", "source", ".", "true", "false", ":", "alias",
    "echo", "printf", "sleep", "wait", "clear", "exit", "return", "shift", "local", "declare",
    "read", "trap", "ulimit", "umask", "hash", "type", "let", "eval", "test", "[", "[[",
})
# Dropped when they follow a pipe: they shape another command's output.
FILTERS = frozenset({
    "head", "tail", "grep", "egrep", "fgrep", "rg", "sort", "uniq", "wc", "tee", "less", "more",
    "cat", "cut", "tr", "sed", "awk", "gawk", "jq", "yq", "column", "nl", "fold", "fmt", "bat",
    "pbcopy", "xclip", "base64", "rev", "paste",
})
_OPENERS = frozenset({"if", "then", "else", "elif", "do", "while", "until", "!", "{", "time", "coproc"})
_HEADERS = frozenset({"for", "case", "select", "function", "done", "fi", "esac", "}", "in"})
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "fish"})
_INTERPRETERS = frozenset({
    "python", "python2", "python3", "pypy", "pypy3", "node", "nodejs", "deno", "bun", "ruby", "perl",
    "php", "tsx", "ts-node", "Rscript", "julia", "lua", "pwsh", "powershell",
}) | _SHELLS
# Wrappers: (name, flags that take a value). The wrapped command follows.
_WRAPPERS: dict[str, frozenset[str]] = {
    "sudo": frozenset({"-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U"}),
    "env": frozenset({"-u", "-C", "-S"}), "nice": frozenset({"-n"}), "nohup": frozenset(),
    "exec": frozenset({"-a"}), "command": frozenset(), "builtin": frozenset(), "caffeinate": frozenset(),
    "stdbuf": frozenset({"-i", "-o", "-e"}), "ionice": frozenset({"-c", "-n"}), "chronic": frozenset(),
    "xargs": frozenset({"-n", "-I", "-P", "-L", "-d", "-E", "-s", "-a"}), "time": frozenset(),
    "npx": frozenset({"-p", "--package", "-c"}), "pnpx": frozenset(), "bunx": frozenset(),
    "dotenv": frozenset({"-e", "-c", "-v"}), "with-contenv": frozenset(), "watchexec": frozenset({"-w", "-e"}),
}
# Runners whose subcommand runs another program: program -> (subcommands, value flags).
_RUNNERS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "uv": (frozenset({"run"}), frozenset({"--with", "--python", "-p", "--env-file", "--group", "--extra",
                                           "--package", "--directory", "--project", "--index", "--from"})),
    "uvx": (frozenset({""}), frozenset({"--with", "--python", "-p", "--from"})),
    "poetry": (frozenset({"run"}), frozenset({"-C", "--directory"})),
    "pipenv": (frozenset({"run"}), frozenset()), "pdm": (frozenset({"run"}), frozenset({"-p"})),
    "hatch": (frozenset({"run"}), frozenset({"-e"})), "rye": (frozenset({"run"}), frozenset()),
    "conda": (frozenset({"run"}), frozenset({"-n", "--name", "-p", "--prefix"})),
    "mamba": (frozenset({"run"}), frozenset({"-n", "--name", "-p", "--prefix"})),
    "pixi": (frozenset({"run"}), frozenset({"-e", "--environment"})),
    "pnpm": (frozenset({"exec", "dlx"}), frozenset({"-C", "--dir", "--filter", "-F"})),
    "yarn": (frozenset({"exec", "dlx"}), frozenset({"--cwd"})),
    "npm": (frozenset({"exec"}), frozenset({"--prefix", "-w", "--workspace", "-p", "--package"})),
    "bundle": (frozenset({"exec"}), frozenset()), "direnv": (frozenset({"exec"}), frozenset()),
    "nix": (frozenset({"run", "shell", "develop"}), frozenset()),
}
_TAKES_TIME = frozenset({"timeout", "gtimeout"})

# Programs whose first word is a subcommand, and the value-taking global flags
# to step over before it.
_SUBCOMMANDS: dict[str, frozenset[str]] = {
    "git": frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace"}),
    "npm": frozenset({"--prefix", "-w", "--workspace"}), "pnpm": frozenset({"-C", "--dir", "--filter", "-F"}),
    "yarn": frozenset({"--cwd"}), "bun": frozenset({"--cwd"}), "deno": frozenset(),
    "cargo": frozenset({"-C", "--manifest-path", "--config", "-Z"}), "go": frozenset(), "rustup": frozenset(),
    "docker": frozenset({"-H", "--host", "--context", "-c", "--config", "-l", "--log-level"}),
    "docker-compose": frozenset({"-f", "--file", "-p", "--project-name", "--env-file"}),
    "podman": frozenset(), "kubectl": frozenset({"-n", "--namespace", "--context", "--kubeconfig", "-l"}),
    "helm": frozenset({"-n", "--namespace", "--kube-context"}), "terraform": frozenset({"-chdir"}),
    "tofu": frozenset(), "pulumi": frozenset({"-C", "--cwd", "-s", "--stack"}),
    "gh": frozenset({"-R", "--repo"}), "glab": frozenset({"-R", "--repo"}), "hub": frozenset(),
    "uv": frozenset({"--directory", "--project"}), "pip": frozenset(), "pip3": frozenset(), "pipx": frozenset(),
    "poetry": frozenset({"-C", "--directory"}), "pdm": frozenset({"-p"}), "hatch": frozenset({"-e"}),
    "conda": frozenset(), "mamba": frozenset(), "pixi": frozenset(), "brew": frozenset(), "apt": frozenset(),
    "apt-get": frozenset(), "dnf": frozenset(), "yum": frozenset(), "pacman": frozenset(), "snap": frozenset(),
    "alembic": frozenset({"-c", "--config", "-n", "--name", "-x"}), "django-admin": frozenset(),
    "manage.py": frozenset({"--settings"}), "flask": frozenset({"--app", "-A"}), "rails": frozenset(),
    "rake": frozenset(), "bundle": frozenset(), "gem": frozenset(), "mix": frozenset(), "dotnet": frozenset(),
    "mvn": frozenset({"-f", "-pl", "-P", "-s"}), "mvnw": frozenset({"-f", "-pl", "-P"}),
    "gradle": frozenset({"-p"}), "gradlew": frozenset({"-p"}), "make": frozenset({"-C", "-f", "-j"}),
    "just": frozenset({"-f", "--justfile", "-d"}), "task": frozenset({"-d", "-t"}),
    "nx": frozenset(), "turbo": frozenset(), "lerna": frozenset(), "ng": frozenset(), "vite": frozenset(),
    "next": frozenset(), "nuxt": frozenset(), "astro": frozenset(), "expo": frozenset(), "tsc": frozenset(),
    "ruff": frozenset(), "pre-commit": frozenset(), "tox": frozenset(), "nox": frozenset(), "vitest": frozenset(),
    "prisma": frozenset({"--schema"}), "drizzle-kit": frozenset(), "supabase": frozenset(),
    "firebase": frozenset({"--project"}), "vercel": frozenset(), "netlify": frozenset(), "wrangler": frozenset(),
    "flyctl": frozenset({"-a", "--app"}), "fly": frozenset({"-a", "--app"}), "heroku": frozenset({"-a", "--app"}),
    "aws": frozenset({"--profile", "--region", "--output", "--endpoint-url"}), "gcloud": frozenset({"--project"}),
    "az": frozenset(), "systemctl": frozenset(), "launchctl": frozenset(), "service": frozenset(),
    "flutter": frozenset(), "dart": frozenset(), "swift": frozenset(), "xcodebuild": frozenset(),
    "composer": frozenset(), "php": frozenset(), "artisan": frozenset(), "sbt": frozenset(), "stack": frozenset(),
    "cabal": frozenset(), "zig": frozenset(), "bazel": frozenset(), "buck2": frozenset(), "cmake": frozenset(),
    "ollama": frozenset(), "hf": frozenset(), "huggingface-cli": frozenset(), "dvc": frozenset(),
    "claude": frozenset(), "codex": frozenset(), "copilot": frozenset(), "skillopt": frozenset(),
    "skillopt-sleep": frozenset(), "dbt": frozenset({"--profiles-dir", "--project-dir"}),
    "sqlx": frozenset(), "diesel": frozenset(), "sea-orm-cli": frozenset(), "goose": frozenset(),
    "migrate": frozenset({"-path", "-database"}), "changeset": frozenset(), "jj": frozenset({"-R"}),
}
# Subcommands that group others: one more word is kept (``npm run build``).
_GROUPS: dict[str, frozenset[str]] = {
    "npm": frozenset({"run", "run-script"}), "pnpm": frozenset({"run"}), "yarn": frozenset({"run"}),
    "bun": frozenset({"run"}), "deno": frozenset({"task"}),
    "git": frozenset({"stash", "remote", "submodule", "worktree", "lfs", "bisect"}),
    "docker": frozenset({"compose", "container", "image", "volume", "network", "buildx", "system", "context"}),
    "podman": frozenset({"compose", "container", "image", "volume", "network", "system"}),
    "gh": frozenset({"pr", "issue", "run", "repo", "release", "workflow", "auth", "secret", "variable",
                     "codespace", "gist", "label", "project", "cache", "extension"}),
    "glab": frozenset({"mr", "issue", "ci", "repo", "release"}),
    "uv": frozenset({"pip", "tool", "python", "cache", "self"}),
    "poetry": frozenset({"env", "self", "source", "cache"}),
    "kubectl": frozenset({"config", "rollout", "auth", "top"}), "helm": frozenset({"repo", "plugin"}),
    "terraform": frozenset({"workspace", "state", "providers"}),
    "rustup": frozenset({"toolchain", "target", "component"}),
    "conda": frozenset({"env"}), "prisma": frozenset({"migrate", "db"}), "dotnet": frozenset({"ef", "tool", "nuget"}),
    "flutter": frozenset({"pub"}), "dart": frozenset({"pub"}), "go": frozenset({"mod", "work"}),
    "supabase": frozenset({"db", "functions", "migration", "gen", "secrets"}),
    "wrangler": frozenset({"d1", "kv", "r2", "pages"}),
    "nx": frozenset({"run"}), "turbo": frozenset({"run"}), "cargo": frozenset(), "hf": frozenset({"auth", "repo"}),
    "aws": frozenset({"*"}), "gcloud": frozenset({"*"}), "az": frozenset({"*"}), "skillopt-sleep": frozenset({"tasks"}),
}


def shell_signatures(command: object) -> list[str]:
    """Signatures of the commands in one shell command line (see module docstring)."""
    if not isinstance(command, str) or not command.strip():
        return []
    out: list[str] = []
    for words, piped in _segments(command[:MAX_COMMAND_CHARS]):
        sig = _signature(words, piped, depth=0)
        for s in sig:
            if s not in out:
                out.append(s)
        if len(out) >= MAX_SIGNATURES:
            break
    return out[:MAX_SIGNATURES]


def argv_signatures(argv: object) -> list[str]:
    """Signatures of a command given as an argument vector (``["bash", "-lc", "pytest"]``)."""
    if isinstance(argv, str):
        return shell_signatures(argv)
    if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
        return []
    return _dedupe(_signature(list(argv), False, depth=0))


def _dedupe(items: list[str]) -> list[str]:
    out: list[str] = []
    for s in items:
        if s not in out:
            out.append(s)
    return out[:MAX_SIGNATURES]


def _unquote(word: str) -> str:
    if ("'" not in word and '"' not in word and "\\" not in word) or _WINDOWS_PATH_RX.match(word) \
            or _BACKSLASH_PATH_RX.match(word):
        return word  # a Windows path's backslashes are separators, not escapes
    return _UNQUOTE_RX.sub(lambda m: m.group(1) if m.group(1) is not None
                           else (m.group(2) if m.group(2) is not None else (m.group(3) or "")), word)


def _segments(command: str) -> list[tuple[list[str], bool]]:
    """Simple commands of ``command`` as (unquoted words, follows a pipe)."""
    segments: list[tuple[list[str], bool]] = []
    words: list[str] = []
    piped = False
    heredocs: list[str] = []
    expect_delim = False
    pos, n = 0, len(command)
    while pos < n:
        m = _TOKEN_RX.match(command, pos)
        if m is None:  # an unmatched quote or stray character: skip one character
            pos += 1
            continue
        pos = m.end()
        kind = m.lastgroup
        if kind == "word":
            if expect_delim:
                d = _HEREDOC_DELIM_RX.match(m.group(0))
                if d:
                    heredocs.append(d.group(1))
                expect_delim = False
            else:
                words.append(_unquote(m.group(0)))
        elif kind == "redir":
            expect_delim = m.group(0).lstrip("0123456789") in ("<<", "<<-")
            if not expect_delim:  # the redirection target is not an argument
                t = _TOKEN_RX.match(command, pos)
                while t is not None and t.lastgroup == "space":
                    t = _TOKEN_RX.match(command, t.end())
                if t is not None and t.lastgroup == "word":
                    pos = t.end()
        elif kind == "op":
            op = m.group(0)
            if words:
                segments.append((words, piped))
            words = []
            piped = op in ("|", "|&")
            if op == "\n" and heredocs:
                pos = _skip_heredocs(command, pos, heredocs)
                heredocs = []
    if words:
        segments.append((words, piped))
    return segments


def _skip_heredocs(command: str, pos: int, delims: list[str]) -> int:
    """Position after the bodies of the pending heredocs (each ends at a line equal to its delimiter)."""
    for delim in delims:
        while pos < len(command):
            end = command.find("\n", pos)
            line = command[pos:end if end >= 0 else len(command)]
            pos = end + 1 if end >= 0 else len(command)
            if line.strip() == delim:
                break
    return pos


def _program(word: str) -> str | None:
    """The program's name: basename, without ``.exe`` or an npm ``@version``."""
    name = _PATH_SEP_RX.split(word)[-1]
    if name.lower().endswith((".exe", ".cmd", ".bat")):
        name = name[:-4]
    if "@" in name[1:]:
        name = name[0] + name[1:].split("@", 1)[0]
    return name if _PROGRAM_RX.match(name) else None


def _flag(word: str) -> str | None:
    """A flag's name without any value (``--out=x`` -> ``--out``, ``-pSECRET`` -> ``-p``)."""
    if word.startswith("--"):
        m = _LONG_FLAG_RX.match(word)
        return m.group(0) if m else None
    if word.startswith("-") and len(word) > 1 and word[1].isalpha():
        if _SHORT_FLAG_RX.match(word) or _POWERSHELL_PARAM_RX.match(word):
            return word
        return word[:2]
    return None


def _signature(words: list[str], piped: bool, depth: int) -> list[str]:
    i, n = 0, len(words)
    while i < n and (_ASSIGNMENT_RX.match(words[i]) or words[i] in _OPENERS):
        i += 1
    if i >= n or words[i] in _HEADERS:
        return []
    while i < n:
        prog = _program(words[i])
        if prog is None:
            return []
        if prog in _SHELLS and depth < 3:
            inner = _shell_script(words, i + 1)
            if inner is not None:
                return [s for ws, p in _segments(inner) for s in _signature(ws, p, depth + 1)]
        nxt = _unwrap(prog, words, i + 1)
        if nxt is None:
            break
        i = nxt
        while i < n and _ASSIGNMENT_RX.match(words[i]):
            i += 1
    if i >= n:
        return []
    prog = _program(words[i])
    if prog is None or prog in NOISE or (piped and prog in FILTERS):
        return []
    args = words[i + 1:]
    if prog in _INTERPRETERS:
        for k, a in enumerate(args):
            if a in ("-c", "-e", "--eval"):
                return [f"{prog} {a}"]
            if not a.startswith("-"):
                if _SCRIPT_RX.search(a) and _program(a):
                    prog, args = _program(a) or prog, args[k + 1:]
                break
    return [_with_subcommand(prog, args)]


def _shell_script(words: list[str], i: int) -> str | None:
    """The script of ``bash -c SCRIPT`` / ``bash -lc SCRIPT`` (None if not that form)."""
    while i < len(words) and words[i].startswith("-"):
        if "c" in words[i][1:] and not words[i].startswith("--") and i + 1 < len(words):
            return words[i + 1]
        i += 1
    return None


def _unwrap(prog: str, words: list[str], i: int) -> int | None:
    """Index of the wrapped command's first word, or None if ``prog`` wraps nothing."""
    n = len(words)
    if prog in _WRAPPERS:
        takes = _WRAPPERS[prog]
        while i < n and (words[i].startswith("-") or _ASSIGNMENT_RX.match(words[i])):
            i += 2 if words[i] in takes else 1
        return i if i < n else None
    if prog in _TAKES_TIME:
        while i < n and words[i].startswith("-"):
            i += 2 if words[i] in ("-s", "--signal", "-k", "--kill-after") else 1
        return i + 1 if i + 1 < n else None  # past the duration
    if prog.startswith("python") and i + 1 < n and words[i] == "-m":
        return i + 1  # python -m pytest: the module is the program
    if prog in _RUNNERS:
        subs, takes = _RUNNERS[prog]
        if "" not in subs:
            while i < n and words[i].startswith("-"):
                i += 2 if words[i] in takes else 1
            if i >= n or words[i] not in subs:
                return None
            i += 1
        while i < n and words[i].startswith("-"):
            if words[i] == "--":
                return i + 1 if i + 1 < n else None
            i += 2 if words[i] in takes else 1
        return i if i < n else None
    return None


def _with_subcommand(prog: str, args: list[str]) -> str:
    takes = _SUBCOMMANDS.get(prog)
    if takes is not None:
        i = 0
        while i < len(args) and (args[i].startswith(("-", "+")) or _ASSIGNMENT_RX.match(args[i])):
            a = args[i]
            i += 2 if (a in takes or (a.split("=", 1)[0] in takes and "=" not in a)) else 1
        if i < len(args) and _SUBCOMMAND_RX.match(args[i]):
            sub = args[i]
            group = _GROUPS.get(prog, frozenset())
            if (sub in group or "*" in group) and i + 1 < len(args) and _SCRIPT_NAME_RX.match(args[i + 1]) \
                    and not args[i + 1].startswith("-"):
                return f"{prog} {sub} {args[i + 1]}"
            return f"{prog} {sub}"
    for a in args:
        if a == "--":
            break
        flag = _flag(a)
        if flag:
            return f"{prog} {flag}"
    return prog
