"""The seed's entry point: `python scripts/train.py --config configs/searchqa/default.yaml`.
A thin wrapper around `skillopt train`."""

import sys

from skillopt_core.cli.main import main

if __name__ == "__main__":
    sys.exit(main(["train", *sys.argv[1:]]))
