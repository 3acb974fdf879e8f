#!/usr/bin/env bash
# SkillOpt-Sleep for Codex: registers the MCP server (`skillopt-sleep mcp`) in
# $CODEX_HOME/config.toml, with `codex mcp add` when codex is on PATH, and installs
# the skill in ~/.agents/skills/skillopt-sleep/. Running it again changes nothing.
#
#   bash plugins/codex/install.sh               # install
#   bash plugins/codex/install.sh --uninstall   # config.toml back byte for byte, skill removed
#
# The work is done by `skillopt-sleep integrate codex` (sleep/integrations/).
set -euo pipefail
here="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=SCRIPTDIR/../lib/find-skillopt-sleep.bash
. "$here/../lib/find-skillopt-sleep.bash"

if ! exe="$(find_skillopt_sleep)"; then
  skillopt_sleep_missing "$here/../.."
  exit 1
fi
exec "$exe" integrate codex --command "$exe" --skill "$here/skills/skillopt-sleep/SKILL.md" "$@"
