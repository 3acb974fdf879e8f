"""GitHub Copilot: two transcript stores, VS Code's Copilot Chat (every VS Code ``User``
folder, :func:`sleep.paths.vscode_user_dirs`) and the Copilot CLI (``$COPILOT_HOME``,
default ``~/.copilot``); replayed with ``copilot -p``; skills in ``.github/skills``; the
MCP server registered by ``skillopt-sleep integrate copilot`` (:mod:`sleep.integrations.copilot`)."""

from sleep.hosts.host import Home, Host, Mcp, Sandbox, Skills, Source, Watch

CLI_HOME = Home("COPILOT_HOME", {"*": ".copilot"}, flag="--copilot-home", label="Copilot CLI home")
# Linux ~/.config/Code/User, macOS ~/Library/Application Support/Code/User, Windows %APPDATA%\Code\User,
# remote servers ~/.vscode-server/data/User (all listed on every platform; see sleep.paths).
VSCODE_USER = Home("APPDATA", locate="sleep.paths:vscode_user_dirs", carry=False)

HOST = Host(
    name="copilot",
    label="Copilot",
    sources=(
        Source("copilot-vscode", "sleep.harvest.sources.copilot_vscode:CopilotVSCodeSource", VSCODE_USER,
               watch=(Watch("workspaceStorage", parent="chatSessions"),
                      Watch("globalStorage/emptyWindowChatSessions", recursive=False))),
        Source("copilot-cli", "sleep.harvest.sources.copilot_cli:CopilotCliSource", CLI_HOME,
               watch=(Watch("session-state"), Watch("history-session-state", recursive=False))),
    ),
    replay="copilot",
    ready="sleep.hosts.ready:copilot",
    sandbox=Sandbox(folder=".copilot", folder_env="COPILOT_HOME", auth_files=("config.json",),
                    key_vars=("GH_TOKEN", "GITHUB_TOKEN", "COPILOT_GITHUB_TOKEN")),
    api_hosts=("api.githubcopilot.com", "*.githubcopilot.com", "api.github.com", "github.com"),
    skills=Skills(project=(".github/skills",)),
    mcp=Mcp(integrate="copilot", plugin="copilot",
            configs=("VS Code's User/mcp.json (key servers)", "$COPILOT_HOME/mcp-config.json (key mcpServers)")),
)
