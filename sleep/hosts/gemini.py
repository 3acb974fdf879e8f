"""Gemini CLI: chats under ``$GEMINI_CLI_HOME/.gemini/tmp/<project>/chats`` (default
``~/.gemini``) and the sessions only ``tmp/<project>/logs.json`` holds; replayed with
``gemini -p --output-format stream-json`` (the ``gemini-cli`` backend); the MCP server
registered by ``skillopt-sleep integrate gemini`` in its ``settings.json`` (:mod:`sleep.integrations.mcp_json`).
Skills: workspace ``.gemini/skills`` or its ``.agents/skills`` alias, user
``~/.gemini/skills`` or ``~/.agents/skills`` (https://geminicli.com/docs/cli/using-agent-skills/,
"Discovery tiers")."""

from sleep.hosts.host import Home, Host, Mcp, Sandbox, Skills, Source, Watch

HOME = Home("GEMINI_CLI_HOME", {"*": ".gemini"}, under_env=".gemini")
AGENTS = Home(None, {"*": ".agents"})

HOST = Host(
    name="gemini",
    label="Gemini CLI",
    sources=(Source("gemini-cli", "sleep.harvest.sources.gemini_cli:GeminiCliSource", HOME,
                    # chats/session-*, delegated agents' chats/<parent id>/<id>.jsonl, logs.json
                    watch=(Watch("tmp", names=("*.jsonl", "*.json")),)),),
    replay="gemini-cli",
    ready="sleep.hosts.ready:gemini",
    # GEMINI_CLI_HOME is the folder *above* .gemini, so no variable is moved.
    sandbox=Sandbox(folder=".gemini", auth_files=("oauth_creds.json", "google_accounts.json", "settings.json"),
                    key_vars=("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION",
                              "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GEMINI_BASE_URL", "GOOGLE_VERTEX_BASE_URL"),
                    endpoints="sleep.replay.endpoints:gemini"),
    api_hosts=("generativelanguage.googleapis.com", "cloudcode-pa.googleapis.com", "oauth2.googleapis.com"),
    skills=Skills(project=(".gemini/skills", ".agents/skills"), user=((HOME, "skills"), (AGENTS, "skills"))),
    mcp=Mcp(integrate="gemini", configs=("$GEMINI_CLI_HOME/.gemini/settings.json (key mcpServers)",)),
)
