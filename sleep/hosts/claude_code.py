"""Claude Code: transcripts under ``$CLAUDE_CONFIG_DIR`` (default ``~/.claude``), replayed
with ``claude -p``, skills in ``.claude/skills`` and the home's ``skills``; the MCP server
comes with the Claude Code plugin (``plugins/claude-code``)."""

from sleep.hosts.host import Home, Host, Mcp, Sandbox, Skills, Source, Watch

HOME = Home("CLAUDE_CONFIG_DIR", {"*": ".claude"}, flag="--claude-home", label="Claude Code home")

HOST = Host(
    name="claude-code",
    label="Claude Code",
    sources=(Source("claude-code", "sleep.harvest.sources.claude_code:ClaudeCodeSource", HOME,
                    watch=(Watch("projects"), Watch("", recursive=False, names=("history.jsonl",)))),),
    replay="claude-code",
    ready="sleep.hosts.ready:claude_code",
    probe_ready="sleep.hosts.ready:claude_code_by_key",
    sandbox=Sandbox(
        folder=".claude", folder_env="CLAUDE_CONFIG_DIR", auth_files=(".credentials.json",),
        home_files=(".claude.json",),
        key_vars=("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_BASE_URL",
                  "ANTHROPIC_MODEL", "ANTHROPIC_SMALL_FAST_MODEL", "ANTHROPIC_CUSTOM_HEADERS",
                  "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX",
                  # the checkout's CLAUDE.md loads as project memory (skillopt_core.backends.claude_code.MEMORY_ENV)
                  "CLAUDE_CODE_ADDITIONAL_DIRECTORIES_CLAUDE_MD"),
        # the cloud's own credentials and endpoints, only with the switch that makes Claude Code use them
        switched_vars=(("CLAUDE_CODE_USE_BEDROCK", ("ANTHROPIC_BEDROCK_BASE_URL", "AWS_REGION", "AWS_DEFAULT_REGION",
                                                     "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                                                     "AWS_BEARER_TOKEN_BEDROCK", "CLAUDE_CODE_SKIP_BEDROCK_AUTH")),
                       ("CLAUDE_CODE_USE_VERTEX", ("ANTHROPIC_VERTEX_BASE_URL", "ANTHROPIC_VERTEX_PROJECT_ID",
                                                    "CLOUD_ML_REGION", "CLAUDE_CODE_SKIP_VERTEX_AUTH"))),
        # what Claude Code documents for no traffic beyond the model API
        extra_env=(("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"), ("DISABLE_AUTOUPDATER", "1"),
                   ("DISABLE_TELEMETRY", "1"), ("DISABLE_ERROR_REPORTING", "1")),
        endpoints="sleep.replay.endpoints:claude_code"),
    api_hosts=("api.anthropic.com", "*.anthropic.com", "statsig.anthropic.com"),
    skills=Skills(project=(".claude/skills",), user=((HOME, "skills"),)),
    mcp=Mcp(plugin="claude-code", configs=("the plugin's .mcp.json (installed with `claude plugin install`)",)),
)
