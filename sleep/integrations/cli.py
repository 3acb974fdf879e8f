"""``skillopt-sleep integrate codex|copilot|gemini|opencode|cursor [--uninstall]``: what
``plugins/codex/install.sh`` and ``plugins/copilot/install.sh`` run once they have found the
executable; ``gemini``, ``opencode`` and ``cursor`` register the MCP server in those hosts'
JSON configuration (:mod:`sleep.integrations.mcp_json`).

Exit codes: 0 done (every file says what happened to it), 2 bad input or a file
that cannot be edited safely (nothing was changed).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from sleep.commands import Commands
from sleep.integrations.command import CommandError

commands = Commands()
register = commands.register


def _args(p: argparse.ArgumentParser) -> None:
    hosts = p.add_subparsers(dest="host", metavar="HOST", required=True)
    codex = hosts.add_parser("codex",
                             help="the MCP server in $CODEX_HOME/config.toml and the skill in ~/.agents/skills",
                             description="Register the skillopt-sleep MCP server with Codex ($CODEX_HOME/config.toml, "
                                         "through `codex mcp add` when codex is on PATH) and install the "
                                         "skillopt-sleep skill in ~/.agents/skills.")
    codex.add_argument("--skill", type=Path, metavar="FILE",
                       help="the SKILL.md to install (default: plugins/codex/skills/skillopt-sleep/SKILL.md of "
                            "the clone SkillOpt runs from, when there is one)")
    codex.add_argument("--codex-home", type=Path, metavar="DIR", help="Codex's home (default $CODEX_HOME or ~/.codex)")
    codex.add_argument("--no-codex-cli", action="store_true",
                       help="edit config.toml directly even when `codex` is on PATH")
    copilot = hosts.add_parser("copilot", help="the MCP server in VS Code's user mcp.json and the Copilot CLI's "
                                               "mcp-config.json",
                               description="Register the skillopt-sleep MCP server with VS Code (--vscode: every "
                                           "User folder's mcp.json) and/or the Copilot CLI (--cli: "
                                           "mcp-config.json).")
    copilot.add_argument("--vscode", action="store_true", help="VS Code (every User folder found)")
    copilot.add_argument("--vscode-user-dir", type=Path, action="append", default=[], metavar="DIR",
                         help="this VS Code User folder (repeatable; implies --vscode)")
    copilot.add_argument("--cli", action="store_true", help="the Copilot CLI ($COPILOT_HOME or ~/.copilot)")
    json_hosts = []
    for host, where in (("gemini", "Gemini CLI's settings.json ($GEMINI_CLI_HOME/.gemini or ~/.gemini), "
                                   "key mcpServers"),
                        ("opencode", "OpenCode's opencode.json ($XDG_CONFIG_HOME/opencode or ~/.config/opencode), "
                                     "key mcp"),
                        ("cursor", "Cursor's ~/.cursor/mcp.json (the IDE and cursor-agent), key mcpServers")):
        sub = hosts.add_parser(host, help=f"the MCP server in {where}",
                               description=f"Register the skillopt-sleep MCP server in {where}. Other keys are kept; "
                                           "--uninstall gives back the file as it was.")
        sub.add_argument("--config", type=Path, metavar="FILE",
                         help="edit this file instead (e.g. a project's .cursor/mcp.json or .gemini/settings.json)")
        json_hosts.append(sub)
    for sub in (codex, copilot, *json_hosts):
        sub.add_argument("--command", metavar="PATH",
                         help="the skillopt-sleep executable the agent starts (default: the one on PATH)")
        sub.add_argument("--uninstall", action="store_true", help="undo the install")


def default_codex_skill() -> Path | None:
    """The Codex skill of the clone this package runs from (an editable or source install)."""
    path = Path(__file__).resolve().parents[2] / "plugins" / "codex" / "skills" / "skillopt-sleep" / "SKILL.md"
    return path if path.is_file() else None


@commands.command("integrate", "register SkillOpt-Sleep with Codex, Copilot, Gemini CLI, OpenCode or Cursor", _args)
def cmd_integrate(args: argparse.Namespace) -> int:
    from sleep.integrations import codex, copilot, mcp_json
    from sleep.integrations.command import resolve

    try:
        if args.host in mcp_json.HOSTS:
            if args.uninstall:
                outcomes = mcp_json.uninstall(args.host, args.config)
            else:
                outcomes = [mcp_json.install(args.host, resolve(args.command), args.config)]
        elif args.host == "codex":
            skill = args.skill or default_codex_skill()
            if skill is None or not skill.is_file():
                given = f"--skill {args.skill}: no such file" if args.skill else \
                    "this installation has no plugins/codex/skills/skillopt-sleep/SKILL.md"
                print(f"skillopt-sleep integrate codex: {given}; pass --skill FILE with the clone's "
                      "plugins/codex/skills/skillopt-sleep/SKILL.md", file=sys.stderr)
                return 2
            args.skill = skill
            home = args.codex_home.expanduser() if args.codex_home else None
            if args.uninstall:
                outcomes = codex.uninstall(args.skill, home)
            else:
                outcomes = codex.install(resolve(args.command), args.skill, home, use_codex_cli=not args.no_codex_cli)
        else:
            targets = _copilot_targets(args)
            if args.uninstall:
                outcomes = [copilot.uninstall(t) for t in targets]
            else:
                exe = resolve(args.command)
                for target in targets:  # refuse before touching any file, so a refusal changes nothing
                    copilot.check(target, exe)
                outcomes = [copilot.install(t, exe) for t in targets]
    except (CommandError, codex.CodexConfigError, copilot.CopilotConfigError, _NoTarget) as exc:
        print(f"skillopt-sleep integrate {args.host}: {exc}", file=sys.stderr)
        return 2
    for outcome in outcomes:
        print(outcome.line())
    if not outcomes:
        print("Nothing to undo: no earlier install was found.")
    return 0


class _NoTarget(ValueError):
    pass


def _copilot_targets(args: argparse.Namespace) -> list:
    from sleep.integrations import copilot

    explicit = args.vscode or args.vscode_user_dir or args.cli
    targets = []
    if args.vscode_user_dir:
        targets += [copilot.vscode_target(d.expanduser()) for d in args.vscode_user_dir]
    elif args.vscode or not explicit:
        dirs = copilot.vscode_user_dirs()
        if args.vscode and not dirs and not args.uninstall:
            raise _NoTarget("no VS Code User folder found; pass --vscode-user-dir DIR "
                            "(e.g. ~/.config/Code/User or ~/Library/Application Support/Code/User)")
        targets += [copilot.vscode_target(d) for d in dirs]
    if args.cli or (not explicit and (args.uninstall or copilot.cli_present())):
        targets.append(copilot.cli_target())
    if args.uninstall and not explicit:
        targets += copilot.installed_targets()
    unique = list({t.path: t for t in targets}.values())
    if args.uninstall and not explicit:
        unique = [t for t in unique if t.path.exists()]
    if not unique and not args.uninstall:
        raise _NoTarget("found neither a VS Code User folder nor the Copilot CLI; pass --vscode-user-dir DIR "
                        "or --cli")
    return unique
