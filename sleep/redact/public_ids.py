"""Telling random secrets from long tokens that are public by construction.

The high-entropy check in :mod:`sleep.redact` looks at a token's shape only.
Shape alone confuses secrets with identifiers that are random too but public:
content hashes (package integrity, pip ``--hash``, Docker digests, go.sum
``h1:``), SSH public keys, and on-chain identifiers (Bitcoin addresses,
IPFS CIDs, Solana public keys and signatures). This module recognises those
by structure (a hash label, a base58check checksum, a multihash prefix) or,
where the structure is ambiguous, by a context word on the same line. It
never exempts a token that a specific secret rule matched: those run first.
"""

from __future__ import annotations

import hashlib
import math
import re

_HEX_RX = re.compile(r"^[0-9a-fA-F]+$")
_DIGIT = re.compile(r"[0-9]")
_LETTER = re.compile(r"[A-Za-z]")
_LOWER = re.compile(r"[a-z]")
_UPPER = re.compile(r"[A-Z]")
_UUID_RX = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")


def shannon_entropy(text: str) -> float:
    """Bits per character of ``text`` (0 for empty)."""
    if not text:
        return 0.0
    n = len(text)
    # str.count per distinct character beats a Counter on the short tokens checked here.
    return -sum(c / n * math.log2(c / n) for c in (text.count(ch) for ch in set(text)))


# ----- identifiers and paths --------------------------------------------------------------

# Words of code: Capitalised or lower-case runs, ALLCAPS acronyms, numbers.
_PART_RX = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
_VOWEL_RX = re.compile(r"[aeiouyAEIOUY]")
_CONSONANT_RUN_RX = re.compile(r"[b-df-hj-np-tv-xzB-DF-HJ-NP-TV-XZ]{5,}")
_PIECE_SPLIT_RX = re.compile(r"[/._\-]")


def identifier_like(token: str) -> bool:
    """True for names people write (``getUserByIdV3Async``, ``HTTP2Server``).

    At least 60 % of the characters sit in pronounceable words (3+ letters, a
    vowel, no run of 5 consonants), the rest are acronyms, 2-letter words or
    numbers of up to 4 digits (3 at most), with at most one part that is none
    of these, and parts are not shorter than about 4 characters on average.
    Random base62 text passes this about 7 times in 10,000 at 24 characters
    and almost never beyond 32.
    """
    parts = _PART_RX.findall(token)
    if not parts:
        return False
    total = sum(len(p) for p in parts)
    words = numbers = odd = 0
    for p in parts:
        if p.isdigit():
            if len(p) <= 4:
                numbers += 1
            else:
                odd += 1
        elif p.isupper():
            if not 2 <= len(p) <= 5:
                odd += 1
        elif len(p) == 2:
            if not _VOWEL_RX.search(p):
                odd += 1
        elif len(p) >= 3 and _VOWEL_RX.search(p) and not _CONSONANT_RUN_RX.search(p):
            words += len(p)
        else:
            odd += 1
    return odd <= 1 and numbers <= 3 and words >= 0.6 * total and len(parts) <= total / 4 + 2


def path_like(token: str) -> bool:
    """A path (``a/b/c``) whose long mixed-case pieces all read as names; base64 with
    two slashes in it is not a path."""
    if token.count("/") < 2:
        return False
    for piece in _PIECE_SPLIT_RX.split(token):
        if len(piece) >= 12 and _LOWER.search(piece) and _UPPER.search(piece) and not identifier_like(piece):
            return False
    return True


def looks_high_entropy(token: str) -> bool:
    """True if ``token`` looks like a random secret rather than a word, path or id.

    Hex strings (an ``0x`` prefix is ignored): 32+ chars, mixed digits/letters,
    not a 40-char git object id or address. Base64-ish strings: 24+ chars with
    upper, lower and digits, not a path, and entropy near what
    random text of that length has. (Whole identifiers stay under the entropy
    bar on their own; :func:`identifier_like` only vets the pieces of a path.)
    """
    token = token.rstrip("=")
    if token[:2] in ("0x", "0X") and _HEX_RX.match(token[2:] or "-"):
        token = token[2:]
    n = len(token)
    if n < 24 or _UUID_RX.match(token):
        return False
    if not _DIGIT.search(token):
        return False  # every random token of this length has a digit; words do not
    if _HEX_RX.match(token):
        if n < 32 or n == 40:
            return False
        return _LETTER.search(token) is not None and shannon_entropy(token) >= 3.0
    if not (_LOWER.search(token) and _UPPER.search(token)):
        return False
    if token.count("-") >= 4 or token.count("_") >= 4 or path_like(token):
        return False
    threshold = min(4.3, 0.85 * math.log2(n))
    return shannon_entropy(token) >= threshold


# ----- public by structure or context -----------------------------------------------------

# A hash algorithm label written right before the value: sha512-<b64>, sha256:<hex>, h1:<b64>.
_HASH_LABEL_RX = re.compile(
    r"(?i)(?<![A-Za-z0-9])(?:sha(?:1|224|256|384|512)|sha3-(?:256|512)|md5|blake2b|blake3|h1)[:\-=]$")
# Words that name a hex string as a digest when they precede it on the line.
_DIGEST_WORD_RX = re.compile(r"(?i)\b(?:checksum|digest|integrity|hash|oid|commit|sha\w*|container|image"
                             r"|object|package|blockhash|txid)\b")
_SSH_KEY_TYPE_RX = re.compile(r"(?:ssh-(?:rsa|ed25519|dss)|ecdsa-sha2-nistp\d+|sk-ssh-ed25519@openssh\.com"
                              r"|sk-ecdsa-sha2-nistp256@openssh\.com) $")
_ONCHAIN_WORD_RX = re.compile(
    r"(?i)\b(?:address(?:es)?|pubkey|public[ _]?key|publickey|wallet|mint|program(?:[ _]?id)?|account"
    r"|owner|signature|txid|tx|transaction|solana|explorer|recipient|spender|validator|token[ _]?mint|nft|dex|pool"
    r"|helius|solscan|devnet|mainnet|testnet|lamports?|spl|balance|transfer(?:red)?|airdrop|stake|swap|usdc|usdt"
    r"|sol|holder|deposit|withdraw|raydium|jupiter|phantom|metaplex|pda|on-?chain)s?\b")
_SIGNATURE_WORD_RX = re.compile(r"(?i)\b(?:signature|sig|txid|tx|transaction)\b")
_SECRET_WORD_RX = re.compile(r"(?i)private|secret|seed|mnemonic|passphrase|password|credential")
_B58_ALPHABET = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
_B58_INDEX = {c: i for i, c in enumerate(_B58_ALPHABET)}
# Identifiers a provider publishes by design: a Square application id (production
# sq0idp-, sandbox sandbox-sq0idb-) goes into every web page of the app.
_PUBLIC_PREFIX_RX = re.compile(r"(?:sandbox-)?sq0id[pb]-[A-Za-z0-9_\-]{22}$")
_B58_RX = re.compile(r"^[1-9A-HJ-NP-Za-km-z]+$")
# base58check version bytes of private keys (WIF mainnet/testnet) and extended private keys.
_PRIVATE_VERSIONS = (b"\x80", b"\xef", b"\x04\x88\xad\xe4", b"\x04\x35\x83\x94")


def b58decode(token: str) -> bytes | None:
    """Bytes of a base58 string (Bitcoin alphabet), or None if it is not one."""
    if not token or not _B58_RX.match(token):
        return None
    n = 0
    for c in token:
        n = n * 58 + _B58_INDEX[c]
    body = n.to_bytes((n.bit_length() + 7) // 8, "big") if n else b""
    return b"\0" * (len(token) - len(token.lstrip("1"))) + body


def public_by_structure(token: str) -> bool:
    """A base58check address (not a private key) or an IPFS CIDv0: public by construction."""
    raw = b58decode(token)
    if raw is None:
        return False
    if len(raw) == 34 and raw[:2] == b"\x12\x20":
        return True  # multihash sha2-256: an IPFS content id
    if len(raw) >= 21:
        payload, check = raw[:-4], raw[-4:]
        if hashlib.sha256(hashlib.sha256(payload).digest()).digest()[:4] == check:
            return not payload.startswith(_PRIVATE_VERSIONS)
    return False


def public_identifier(token: str, line_before: str, line_after: str, onchain_text: bool = False) -> bool:
    """True if ``token`` (already judged random-looking) is a public value, judged
    from the token and the text around it on its line (``onchain_text``: the whole
    text speaks of on-chain things, :func:`onchain_context`). A word such as "private",
    "secret" or "seed" just before the token vetoes the exemptions that rest on
    context alone."""
    if _HASH_LABEL_RX.search(line_before[-12:]):
        return True
    label_end = token.find("-")
    if 0 < label_end <= 9 and _HASH_LABEL_RX.search(token[:label_end + 1]):
        return True  # sha512-<base64> is one token
    if token.startswith("AAAA") and _SSH_KEY_TYPE_RX.search(line_before[-40:]):
        return True
    if _B58_RX.match(token) and public_by_structure(token):
        return True
    if _PUBLIC_PREFIX_RX.match(token):
        return True
    near = line_before[-60:]
    if _SECRET_WORD_RX.search(near):
        return False
    body = token[2:] if token[:2] in ("0x", "0X") else token
    if _HEX_RX.match(body):
        return _DIGEST_WORD_RX.search(line_before[-40:]) is not None
    raw = b58decode(token)
    # Solana public keys (32 bytes) and signatures (64) carry no checksum: a word says
    # what they are. For a 32-byte value (an address or program id) that word may be
    # anywhere in the text (``onchain_text``: a list of addresses under one heading, a
    # program id repeated through a prompt), unless a credential word just before the
    # value names it otherwise. A 64-byte value must be named a signature on its line
    # (a Solana secret key has the same shape).
    if raw is not None and len(raw) == 32:
        if _CREDENTIAL_WORD_RX.search(near[-30:]):
            return False  # "deposit webhook token <value>": the nearer word names it
        return bool(onchain_text or _ONCHAIN_WORD_RX.search(near) or _ONCHAIN_WORD_RX.search(line_after[:30]))
    if raw is not None and len(raw) == 64:
        return bool(_SIGNATURE_WORD_RX.search(near))
    return False


def onchain_context(text: str) -> bool:
    """True if ``text`` speaks of on-chain things (an address, a program, a wallet ...)."""
    return _ONCHAIN_WORD_RX.search(text) is not None


# ----- secret by context ------------------------------------------------------------------

# Words that name the value after them as a credential ("the deploy key is ...", "GITHUB_TOKEN ...").
_CREDENTIAL_WORD_RX = re.compile(
    r"(?i)(?:\b|_)(?:tokens?|secrets?|passw(?:or)?ds?|passphrase|credentials?|apikey|pat|bearer"
    r"|(?:api|access|deploy|secret|signing|private|auth|license|master|encryption|session)[ _-]?keys?)(?:\b|_)")
# Words that name a hex string as a git object or a digest ("revert <sha>", "sha256 <hex>").
_GIT_OR_DIGEST_WORD_RX = re.compile(
    r"(?i)\b(?:commit|revert|checkout|cherry-pick|rebase|merge|reset|show|blame|bisect|tag|ref|rev|tree|blob"
    r"|object|sha\w*|checksum|digest|integrity|hash|oid|container|image|git)\b")


def hex_secret_shape(token: str) -> bool:
    """The shape :func:`secret_by_context` asks of a token before it reads the context: a
    24-64 character hex string (an ``0x`` prefix is ignored) with a letter and a digit."""
    body = token[2:] if token[:2] in ("0x", "0X") else token
    return 24 <= len(body) <= 64 and _HEX_RX.match(body) is not None and _LETTER.search(body) is not None \
        and _DIGIT.search(body) is not None


def judged_alone(run: str) -> bool:
    """True if the entropy check's verdict on ``run`` (a match of the redactor's
    high-entropy pattern) cannot depend on the text around it: it does not look high
    entropy (so :func:`public_identifier` is never asked) and has no shape
    :func:`secret_by_context` could name a secret."""
    return not looks_high_entropy(run) and not hex_secret_shape(run)


def secret_by_context(token: str, line_before: str) -> bool:
    """A hex string that its shape alone leaves public (a 40-character git object id, or
    shorter than 32) but that a credential word names as a secret: ``GITHUB_TOKEN
    3f2a...``, ``the deploy key is 3f2a...``. A git or digest word nearer to the value
    than the credential word keeps it public (``token fix in commit 3f2a...``)."""
    if not hex_secret_shape(token):
        return False
    body = token[2:] if token[:2] in ("0x", "0X") else token
    near = line_before[-60:]
    credential = [m.end() for m in _CREDENTIAL_WORD_RX.finditer(near)]
    if not credential or shannon_entropy(body) < 3.0:
        return False
    public = [m.end() for m in _GIT_OR_DIGEST_WORD_RX.finditer(near)]
    return not public or credential[-1] > public[-1]


# ----- armored public blocks ---------------------------------------------------------------

# PEM/OpenPGP armor whose body is public by construction: a public key, a certificate, a
# detached signature. A private key block is caught whole by its own rule before this runs.
_PUBLIC_BLOCK_RX = re.compile(
    r"-----BEGIN (?P<label>PGP PUBLIC KEY BLOCK|PGP SIGNATURE|PUBLIC KEY|RSA PUBLIC KEY|CERTIFICATE"
    r"|SSH2 PUBLIC KEY|OPENSSH PUBLIC KEY)-----[\s\S]*?(?:-----END (?P=label)-----|\Z)")


def public_block_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each armored public key, certificate or signature in ``text``."""
    if "-----BEGIN " not in text:
        return []
    return [m.span() for m in _PUBLIC_BLOCK_RX.finditer(text)]
