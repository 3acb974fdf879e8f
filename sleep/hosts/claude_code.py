"""Claude Code: transcripts under ``$CLAUDE_CONFIG_DIR`` (default ``~/.claude``), replayed
with ``claude -p``, skills in ``.claude/skills`` and the home's ``skills``; the MCP server
comes with the Claude Code plugin (``plugins/claude-code``)."""

from sleep.hosts.host import Home, Host, Mcp, Skills, Source, Watch

HOME = Home("CLAUDE_CONFIG_DIR", {"*": ".claude"}, flag="--claude-home", label="Claude Code home")

HOST = Host(
    name="claude-code",
    label="Claude Code",
    sources=(Source("claude-code", "sleep.harvest.sources.claude_code:ClaudeCodeSource", HOME,
                    watch=(Watch("projects"), Watch("", recursive=False, names=("history.jsonl",)))),),
    replay="claude-code",
    skills=Skills(project=(".claude/skills",), user=((HOME, "skills"),)),
    mcp=Mcp(plugin="claude-code", configs=("the plugin's .mcp.json (installed with `claude plugin install`)",)),
)
