"""Launch the SkillOpt MCP server for GitHub Copilot (the path the seed documents).

A thin launcher, no logic: ``python plugins/copilot/mcp_server.py [--http --port 8765]``
is ``skillopt-sleep mcp [--http --port 8765]``. Register it in VS Code's
``.vscode/mcp.json`` (key ``servers``) or the Copilot CLI's
``~/.copilot/mcp-config.json`` (key ``mcpServers``); see the README.
"""

import sys

from sleep.cli import main

if __name__ == "__main__":
    sys.exit(main(["mcp", *sys.argv[1:]]))
