"""The seed's entry point: `python scripts/eval_only.py --config ... --skill ...`.
A thin wrapper around `skillopt eval`."""

import sys

from skillopt_core.cli.main import main

if __name__ == "__main__":
    sys.exit(main(["eval", *sys.argv[1:]]))
