"""Gemini CLI: chats under ``$GEMINI_CLI_HOME/.gemini/tmp/<project>/chats`` (default
``~/.gemini``); harvest only for now (no replay backend, no MCP registration yet).
Skills: workspace ``.gemini/skills`` or its ``.agents/skills`` alias, user
``~/.gemini/skills`` or ``~/.agents/skills`` (https://geminicli.com/docs/cli/using-agent-skills/,
"Discovery tiers")."""

from sleep.hosts.host import Home, Host, Skills, Source, Watch

HOME = Home("GEMINI_CLI_HOME", {"*": ".gemini"}, under_env=".gemini")
AGENTS = Home(None, {"*": ".agents"})

HOST = Host(
    name="gemini",
    label="Gemini CLI",
    sources=(Source("gemini-cli", "sleep.sources.gemini_cli:GeminiCliSource", HOME,
                    watch=(Watch("tmp", parent="chats"),)),),
    replay=None,
    skills=Skills(project=(".gemini/skills", ".agents/skills"), user=((HOME, "skills"), (AGENTS, "skills"))),
)
