#!/usr/bin/env bash
# SkillOpt-Sleep for GitHub Copilot: registers the MCP server (`skillopt-sleep mcp`) in
# VS Code's user mcp.json (key "servers") and in the Copilot CLI's
# ~/.copilot/mcp-config.json (key "mcpServers"). Running it again changes nothing.
#
#   bash plugins/copilot/install.sh                  # every VS Code User folder found, and the
#                                                    # Copilot CLI if ~/.copilot or `copilot` exists
#   bash plugins/copilot/install.sh --vscode         # only VS Code (--vscode-user-dir DIR for another)
#   bash plugins/copilot/install.sh --cli            # only the Copilot CLI ($COPILOT_HOME honoured)
#   bash plugins/copilot/install.sh --uninstall      # each file back byte for byte
#
# The work is done by `skillopt-sleep integrate copilot` (sleep/integrations/).
set -euo pipefail
here="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=SCRIPTDIR/../lib/find-skillopt-sleep.bash
. "$here/../lib/find-skillopt-sleep.bash"

if ! exe="$(find_skillopt_sleep)"; then
  skillopt_sleep_missing "$here/../.."
  exit 1
fi
exec "$exe" integrate copilot --command "$exe" "$@"
