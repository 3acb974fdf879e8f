"""The model endpoints an agent CLI is configured with, read the way the CLI reads them.

:func:`configured_endpoints` gives, per CLI family, the endpoints its
environment and configuration files name (``ANTHROPIC_BASE_URL``, Bedrock and
Vertex when Claude Code's switches are set, ``OPENAI_BASE_URL``, the chosen
Codex provider's ``base_url`` in ``config.toml``, OpenCode's providers'
``baseURL``, ``GOOGLE_GEMINI_BASE_URL``, Pi's ``models.json`` providers' ``baseUrl``); :func:`person_proxy` and
:func:`no_proxy` the person's own proxy settings. :mod:`sleep.replay.egress`
lets exactly these through.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from sleep.hosts import replaying
from sleep.hosts.host import load_ref
from sleep.jsonshape import as_dict


@dataclass(frozen=True)
class Endpoint:
    """One model endpoint a CLI is configured with: ``scheme`` (http, https), host, port."""

    scheme: str
    host: str
    port: int

    def __str__(self) -> str:
        return f"{self.scheme}://{self.host}:{self.port}"

    def matches(self, host: str, port: int) -> bool:
        return _norm(host) == _norm(self.host) and port == self.port


def _norm(host: str) -> str:
    return host.strip("[]").lower().rstrip(".")


def endpoint(text: str) -> Endpoint | None:
    """The endpoint of a URL (``http://127.0.0.1:8080/v1``) or ``host[:port]`` (https, 443); None if unusable."""
    text = (text or "").strip()
    if not text:
        return None
    parts = urlsplit(text if "://" in text else f"https://{text}")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    try:
        port = parts.port or (80 if parts.scheme == "http" else 443)
    except ValueError:
        return None
    return Endpoint(parts.scheme, parts.hostname.lower(), port)


def _codex_endpoints(env: Mapping[str, str], home: Path) -> list[str]:
    """The base URLs of Codex's ``config.toml``: the chosen provider's, and ``openai_base_url``."""
    config = Path(env.get("CODEX_HOME") or home / ".codex") / "config.toml"
    try:
        data = tomllib.loads(config.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    found = [str(data.get("openai_base_url") or "")]
    providers = as_dict(data.get("model_providers"))
    chosen = [str(data.get("model_provider") or "")]
    chosen += [str(p.get("model_provider") or "") for p in (data.get("profiles") or {}).values() if isinstance(p, dict)]
    for name in chosen:
        provider = providers.get(name)
        if isinstance(provider, dict):
            found.append(str(provider.get("base_url") or ""))
    return found


def codex_env_keys(env: Mapping[str, str], home: Path) -> tuple[str, ...]:
    """The variables Codex's custom providers read their key from (``env_key``)."""
    config = Path(env.get("CODEX_HOME") or home / ".codex") / "config.toml"
    try:
        data = tomllib.loads(config.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ()
    providers = as_dict(data.get("model_providers"))
    return tuple(str(p["env_key"]) for p in providers.values() if isinstance(p, dict) and p.get("env_key"))


def _opencode_endpoints(env: Mapping[str, str], home: Path) -> list[str]:
    """The ``baseURL`` of every provider in OpenCode's configuration (file, or the inline content)."""
    texts = [env.get("OPENCODE_CONFIG_CONTENT") or ""]
    folder = Path(env.get("XDG_CONFIG_HOME") or home / ".config") / "opencode"
    for path in [Path(env["OPENCODE_CONFIG"])] if env.get("OPENCODE_CONFIG") else []:
        texts.append(_read(path))
    for name in ("opencode.json", "opencode.jsonc", "config.json"):
        texts.append(_read(folder / name))
    found = []
    for text in texts:
        try:
            data = json.loads(re.sub(r"^\s*//.*$", "", text, flags=re.M)) if text.strip() else {}
        except ValueError:
            continue
        for provider in (data.get("provider") or {}).values() if isinstance(data, dict) else ():
            options = provider.get("options") if isinstance(provider, dict) else None
            if isinstance(options, dict) and options.get("baseURL"):
                found.append(str(options["baseURL"]))
    return found


def _pi_endpoints(env: Mapping[str, str], home: Path) -> list[str]:
    """The ``baseUrl`` of every provider in Pi's ``models.json`` (``$PI_CODING_AGENT_DIR``, default
    ``~/.pi/agent``)."""
    folder = Path(env["PI_CODING_AGENT_DIR"]).expanduser() if env.get("PI_CODING_AGENT_DIR") else home / ".pi" / "agent"
    try:
        data = json.loads(_read(folder / "models.json") or "{}")
    except ValueError:
        return []
    providers = data.get("providers") if isinstance(data, dict) else None
    return [str(p["baseUrl"]) for p in (providers or {}).values() if isinstance(p, dict) and p.get("baseUrl")] \
        if isinstance(providers, dict) else []


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8") if path.is_file() else ""
    except OSError:
        return ""


def claude_code(env: Mapping[str, str], home: Path) -> list[str]:
    """``ANTHROPIC_BASE_URL``, and the Bedrock or Vertex endpoints when Claude Code's switches are set."""
    urls = [env.get("ANTHROPIC_BASE_URL", "")]
    if env.get("CLAUDE_CODE_USE_BEDROCK"):
        region = env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or "us-east-1"
        urls += [env.get("ANTHROPIC_BEDROCK_BASE_URL") or f"https://bedrock-runtime.{region}.amazonaws.com"]
    if env.get("CLAUDE_CODE_USE_VERTEX"):
        region = env.get("CLOUD_ML_REGION") or "us-east5"
        urls += [env.get("ANTHROPIC_VERTEX_BASE_URL") or f"https://{region}-aiplatform.googleapis.com",
                 "https://aiplatform.googleapis.com", "https://oauth2.googleapis.com"]
    return urls


def codex(env: Mapping[str, str], home: Path) -> list[str]:
    return [env.get("OPENAI_BASE_URL", ""), *_codex_endpoints(env, home)]


def opencode(env: Mapping[str, str], home: Path) -> list[str]:
    return [env.get("ANTHROPIC_BASE_URL", ""), env.get("OPENAI_BASE_URL", ""), *_opencode_endpoints(env, home)]


def gemini(env: Mapping[str, str], home: Path) -> list[str]:
    return [env.get("GOOGLE_GEMINI_BASE_URL", ""), env.get("GOOGLE_VERTEX_BASE_URL", "")]


def pi(env: Mapping[str, str], home: Path) -> list[str]:
    return _pi_endpoints(env, home)


def configured_endpoints(family: str, env: Mapping[str, str] | None = None,
                         home: Path | None = None) -> tuple[Endpoint, ...]:
    """The model endpoints ``family``'s CLI (a replay backend or host family) is configured with
    in ``env`` (default: this process's) and the person's configuration files under ``home``:
    what its host's :attr:`sleep.hosts.Sandbox.endpoints` reads (see the module docstring)."""
    env = os.environ if env is None else env
    home = home or Path.home()
    host = replaying(family)
    urls: list[str] = list(load_ref(host.sandbox.endpoints)(env, home)) if host and host.sandbox.endpoints else []
    out: list[Endpoint] = []
    for url in urls:
        found = endpoint(url)
        if found and found not in out:
            out.append(found)
    return tuple(out)


def person_proxy(env: Mapping[str, str] | None = None) -> Endpoint | None:
    """The person's own HTTP(S) proxy (``HTTPS_PROXY``, else ``HTTP_PROXY``/``ALL_PROXY``), if any."""
    env = os.environ if env is None else env
    for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        value = env.get(name, "").strip()
        found = endpoint(value if "://" in value else f"http://{value}") if value else None
        if found:
            return Endpoint("http", found.host, found.port)
    return None


def no_proxy(env: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The person's ``NO_PROXY`` names (reached directly even when they have a proxy)."""
    env = os.environ if env is None else env
    value = env.get("NO_PROXY") or env.get("no_proxy") or ""
    return tuple(_norm(n.strip().lstrip("*").lstrip(".")) for n in value.split(",") if n.strip())
