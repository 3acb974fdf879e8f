"""``python -m skillopt_webui.app [--port 7860] [--outputs DIR] [--host 127.0.0.1]``: the dashboard.

The command the original SkillOpt documents; here it runs ``skillopt-sleep ui``
(same options, same defaults, same access token and checks).
"""

from __future__ import annotations

import argparse
import sys

from sleep.ui.cli import _ui_args, cmd_ui


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m skillopt_webui.app",
                                description="Serve the SkillOpt dashboard (the same as `skillopt-sleep ui`).")
    _ui_args(p)
    return p


def main(argv: list[str] | None = None) -> int:
    return cmd_ui(parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
