# Sourced by plugins/codex/install.sh and plugins/copilot/install.sh (bash).
# The Claude Code plugin's launcher, plugins/claude-code/bin/skillopt-sleep, carries
# the same function, because Claude Code copies that plugin folder on its own;
# tests/sleep/test_plugin_locator.py checks that the two copies stay identical.

# >>> find_skillopt_sleep
# Prints the installed skillopt-sleep: $SKILLOPT_SLEEP_BIN when set (an absolute path),
# else the first one in an absolute PATH entry, then where pipx, uv tool and
# pip --user put executables. Relative PATH entries (".", "") and so the current
# directory and its parents are never searched; SkillOpt's own launchers are skipped.
find_skillopt_sleep() {
  local dir candidate
  local -a dirs=()
  if [[ -n "${SKILLOPT_SLEEP_BIN:-}" ]]; then
    if [[ "$SKILLOPT_SLEEP_BIN" == /* && -f "$SKILLOPT_SLEEP_BIN" && -x "$SKILLOPT_SLEEP_BIN" ]] \
       && ! LC_ALL=C grep -q -F SKILLOPT_SLEEP_SHIM "$SKILLOPT_SLEEP_BIN" 2>/dev/null; then
      printf '%s\n' "$SKILLOPT_SLEEP_BIN"
      return 0
    fi
    printf 'skillopt-sleep: SKILLOPT_SLEEP_BIN=%s is not the absolute path of an installed skillopt-sleep\n' \
      "$SKILLOPT_SLEEP_BIN" >&2
    return 1
  fi
  IFS=: read -r -a dirs <<<"${PATH:-}"
  dirs+=("${PIPX_BIN_DIR:-}" "${UV_TOOL_BIN_DIR:-}" "${XDG_BIN_HOME:-}")
  if [[ -n "${HOME:-}" ]]; then
    dirs+=("$HOME/.local/bin")
    for dir in "$HOME"/Library/Python/*/bin; do dirs+=("$dir"); done  # pip --user on macOS
  fi
  for dir in "${dirs[@]}"; do
    [[ "$dir" == /* ]] || continue
    candidate="$dir/skillopt-sleep"
    [[ -f "$candidate" && -x "$candidate" ]] || continue
    if LC_ALL=C grep -q -F SKILLOPT_SLEEP_SHIM "$candidate" 2>/dev/null; then continue; fi
    printf '%s\n' "$candidate"
    return 0
  done
  return 1
}
# <<< find_skillopt_sleep

# Says how to install SkillOpt from the clone at $1.
skillopt_sleep_missing() {
  local clone
  clone="$(cd -- "$1" && pwd)"
  printf '%s\n' \
    "skillopt-sleep is not installed (not on PATH, nor where pipx, uv tool or pip --user put it)." \
    "Install it from this clone with one of:" \
    "  pipx install '$clone'" \
    "  uv tool install '$clone'" \
    "  python3 -m pip install --user '$clone'" \
    "or set SKILLOPT_SLEEP_BIN to the absolute path of an installed skillopt-sleep; then run this again." >&2
}
