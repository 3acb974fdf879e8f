"""What a host must give the MCP server when it launches it: the environment
variables the server reads, and how long a tool call may take.

Claude Code and VS Code pass their whole environment to a stdio server; Codex
passes only a short default list (``HOME``, ``PATH``, ``USER``, ``LANG``, ...;
``DEFAULT_ENV_VARS`` in codex-rs/rmcp-client/src/utils.rs) plus what the
server's table names in ``env_vars``. Without :data:`SERVER_ENV_VARS` a
server started by Codex would read another data directory than the same
server started by Claude Code. Codex also stops waiting for a tool call after
``tool_timeout_sec`` (default 60 s, the default wait of ``evaluate_skill``), so
the registration sets :data:`TOOL_TIMEOUT_S`, above the longest wait a call
can ask for. Only the standard library and the host descriptions here
(:mod:`sleep.hosts`, plain data): the Codex integration imports it without the SDK.
"""

from __future__ import annotations

from sleep.hosts import home_env_vars

MAX_WAIT_S = 1800.0  # the longest wait_seconds a tool accepts
HARVEST_TIMEOUT_S = 1800.0  # sleep_harvest waits for its CLI this long at most
TOOL_TIMEOUT_S = int(max(MAX_WAIT_S, HARVEST_TIMEOUT_S)) + 60  # what a host should wait for one call

# Read by the server or by what its tools run, each only when set.
_SERVER_OWN_ENV = (
    # SkillOpt's own: the data directory (index, jobs, runs), caches, replays, dotenv, scheduler folders
    "SKILLOPT_HOME", "SKILLOPT_CACHE_DIR", "SKILLOPT_REPLAY_ROOT", "SKILLOPT_DOTENV", "SKILLOPT_NO_DOTENV",
    "SKILLOPT_SYSTEMD_USER_DIR", "SKILLOPT_LAUNCHD_DIR",
    # where the platform keeps data, config and caches (the default data directory), and the user bus
    # `systemctl --user` needs for schedule_sleep
    "XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR",
    "DBUS_SESSION_BUS_ADDRESS", "APPDATA", "LOCALAPPDATA",
)
# the model keys the training backends read (forwarded by name from the host's own environment)
_MODEL_KEYS_ENV = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "AZURE_OPENAI_API_KEY", "LLAMA_CPP_LIB_PATH")
# ... and between them the hosts' homes, whose transcripts sleep_harvest reads (sleep/hosts/)
SERVER_ENV_VARS = (*_SERVER_OWN_ENV,
                   *(v for v in home_env_vars(carried_only=False) if v not in _SERVER_OWN_ENV),
                   *_MODEL_KEYS_ENV)
