"""`skillopt train`, `skillopt eval` and `skillopt compare`."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence

from skillopt_core.backends import BackendError
from skillopt_core.cli.console import ConsoleRenderer, plain_console
from skillopt_core.run.api import evaluate, prepare_training, resume_settings
from skillopt_core.run.budget import BudgetExceeded
from skillopt_core.run.compare import compare_skills, evaluate_targets
from skillopt_core.run.config import ConfigError, load_settings, packaged_configs
from skillopt_core.skill.document import SkillParseError

# completed, stopped by the budget, cancelled (Ctrl-C), failed (a systemic backend failure)
EXIT_CODES = {"completed": 0, "budget_exhausted": 3, "cancelled": 130, "failed": 1}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="skillopt", description="Train and evaluate skill documents.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--set", dest="overrides", action="append", default=[], metavar="SECTION.KEY=VALUE",
                       help="override one config key (repeatable), e.g. --set train.num_epochs=2")
        p.add_argument("--json", action="store_true",
                       help="print a machine-readable summary on stdout (progress goes to stderr)")

    config_help = f"YAML config file, or the name of a packaged config: {', '.join(packaged_configs())}"
    train = sub.add_parser("train", help="train a skill",
                           description="Train a skill on a config's tasks: rollouts, reflection, edits, a gate on "
                                       "val per step; the run directory keeps every step and best_skill.md.")
    train.add_argument("--config", help=config_help)
    train.add_argument("--resume", metavar="RUN_DIR", help="continue a run after its last finished step")
    train.add_argument("--force", action="store_true",
                       help="with --resume: accept settings or tasks that changed the experiment since the run started")
    common(train)

    ev = sub.add_parser("eval", help="evaluate a skill on the test (or val) split",
                        description="Evaluate one skill file on a config's test (or val, train) split, without "
                                    "training; prints the hard and soft scores over the items evaluated.")
    ev.add_argument("--config", help=config_help)
    ev.add_argument("--skill", help="skill file to evaluate (default: the env's seed skill or skill.init)")
    ev.add_argument("--split", choices=["test", "val", "train"], default="test")
    ev.add_argument("--target", action="append", default=[], metavar="MODEL",
                    help="target model to evaluate on (repeat for several, shown side by side)")
    common(ev)

    cmp = sub.add_parser("compare", help="compare two skills on the same items and seeds (paired statistics)")
    cmp.add_argument("--config", help=config_help)
    cmp.add_argument("--a", metavar="SKILL_OR_RUN",
                     help="skill A: a skill file or a run directory (its best skill); default: the seed skill")
    cmp.add_argument("--b", metavar="SKILL_OR_RUN", help="skill B, the same way (the difference reported is B - A)")
    cmp.add_argument("--aa", action="store_true", help="A/A calibration: compare A with itself on disjoint seeds")
    cmp.add_argument("--split", choices=["test", "val", "train"], default="test")
    cmp.add_argument("--seeds", type=int, default=1,
                     help="answer every item once per seed; repeats are averaged within item")
    cmp.add_argument("--metric", choices=["hard", "soft"], default="hard", help="pass/fail or graded scores")
    cmp.add_argument("--target", action="append", default=[], metavar="MODEL",
                     help="target model (repeat to compare on several, side by side)")
    common(cmp)
    return parser


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("skillopt")
    except PackageNotFoundError:  # a source tree that was never installed
        return "unknown (not installed)"


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    out = plain_console(stderr=args.json)  # run directories and paths are printed as given
    renderer = ConsoleRenderer(out)
    try:
        if args.command == "train":
            if args.resume:
                settings = resume_settings(args.resume, args.overrides)
            elif args.config:
                settings = load_settings(args.config, args.overrides)
            else:
                raise ConfigError("skillopt train needs --config FILE (or --resume RUN_DIR).")
            run = prepare_training(settings, resume=args.resume, force=args.force, subscribers=[renderer])
            result = asyncio.run(run.run()).to_dict()
            exit_code = EXIT_CODES[result["status"]]
        elif args.command == "compare":
            settings = load_settings(args.config, args.overrides)
            result = asyncio.run(compare_skills(
                settings, args.a, args.b, split=args.split, seeds=args.seeds, aa=args.aa,
                targets=args.target or [None], metric=args.metric, subscribers=[renderer]))
            if not args.json:
                for row in result["targets"]:
                    out.print(f"{row['target']}: {row['summary']}")
                out.print(f"Results: {result['run_dir']}")
            exit_code = 0
        elif args.target:
            settings = load_settings(args.config, args.overrides)
            result = asyncio.run(evaluate_targets(settings, args.target, skill_path=args.skill, split=args.split,
                                                  subscribers=[renderer]))
            if not args.json:
                width = max(len(r["target"]) for r in result["targets"])
                for row in result["targets"]:
                    out.print(f"{row['target']:<{width}}  {args.split}: hard {row['hard']:.3f}, soft {row['soft']:.3f} "
                              f"over {row['n_items']} items")
                out.print(f"Results: {result['run_dir']}")
            exit_code = 0
        else:
            settings = load_settings(args.config, args.overrides)
            result = asyncio.run(evaluate(settings, skill_path=args.skill, split=args.split, subscribers=[renderer]))
            if not args.json:
                out.print(f"{args.split}: hard {result['hard']:.3f}, soft {result['soft']:.3f} over "
                          f"{result['n_items']} items")
                out.print(f"Results: {result['run_dir']}")
            exit_code = 0
    except (ConfigError, BackendError, SkillParseError, FileNotFoundError, FileExistsError, ValueError,
            BudgetExceeded) as exc:
        print(f"skillopt: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("skillopt: interrupted; a training run resumes with `skillopt train --resume RUN_DIR`.", file=sys.stderr)
        return 130
    if args.json:
        result = {k: v for k, v in result.items() if k != "per_item"}
        if "targets" in result:
            result["targets"] = [{k: v for k, v in r.items() if k not in ("per_item",)} for r in result["targets"]]
        print(json.dumps(result, indent=2, default=str))
    return exit_code


if __name__ == "__main__":
    sys.exit(main())
