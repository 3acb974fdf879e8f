"""Optional optimizer help, through the scripted backend (never a real model)."""

from __future__ import annotations

import json
import re

from mine_testutil import run, session, store, turn

from skillopt_core import BackendSpec, create_backend
from sleep.index import Index
from sleep.mine import store as mine_store
from sleep.mine.assist import Assistant

# Two words apart ("patch ... hotfix" / "minor ... feature"), so not one argument apart
# (sleep.mine.alternatives, which would keep them apart without a model).
PATCH = "bump the patch version for the hotfix, update the changelog and tag the release"
MINOR = "bump the minor version for the feature, update the changelog and tag the release"


def _backend(confirm=None, judge=None):
    rules = [{"stage": stage, "response": response}
             for stage, response in (("mine-confirm", confirm), ("mine-judge", judge)) if response is not None]
    return create_backend(BackendSpec(name="scripted", model=None, options={"scripted": {"rules": rules}}))


def _split_by_word(request) -> str:
    shown = re.findall(r"^\[(\d+)\] (.*)$", request.messages[0].content, re.M)
    patch = [int(k) for k, text in shown if "patch" in text]
    rest = [int(k) for k, text in shown if "patch" not in text]
    return json.dumps({"same_task": False, "groups": [patch, rest]})


def _release_sessions() -> None:
    shell = ["cargo set-version", "git tag"]
    # Two sessions each: too few for the deterministic contrast check, so one group.
    store(*(session(f"p{k}", turn(PATCH, shell), day=k + 1) for k in range(2)),
          *(session(f"m{k}", turn(MINOR, shell), day=k + 5) for k in range(2)))


def _tasks():
    with Index.open() as index:
        return mine_store.load_tasks(index.conn, None)


def test_the_model_splits_a_group_it_sees_as_two_tasks(homes) -> None:
    _release_sessions()
    report = run(assistant=Assistant(_backend(confirm=_split_by_word)))
    prompts = sorted(t.prompt for t in _tasks())
    assert prompts == [MINOR, PATCH] and report.model["splits"] == 1


def test_without_a_model_the_deterministic_group_stands(homes) -> None:
    _release_sessions()
    run()
    assert len(_tasks()) == 1 and _tasks()[0].support == 4


def test_a_reply_that_is_not_valid_json_is_ignored(homes) -> None:
    _release_sessions()
    report = run(assistant=Assistant(_backend(confirm="I think they differ.")))
    assert report.model["rejected_replies"] >= 1 and report.model["splits"] == 0
    assert len(_tasks()) == 1


def test_model_rules_the_judge_cannot_express_are_dropped(homes) -> None:
    store(session("a", turn("run the unit tests and list what fails", ["npm test"]),
                  turn("no, use pnpm not npm", ["pnpm test"], final="pnpm test: 2 fail.")),
          session("b", turn("run the unit tests and list what fails", ["pnpm test"], final="pnpm: all green.")))
    reply = json.dumps({"rubric": "List failing specs; run them with pnpm.",
                        "rules": [{"type": "regex", "pattern": "(unclosed"}, {"type": "contains", "value": "pnpm"}]})
    report = run(assistant=Assistant(_backend(confirm=json.dumps({"same_task": True}), judge=reply)))
    judge = _tasks()[0].judge
    assert judge == [{"type": "rubric", "rubric": "List failing specs; run them with pnpm."},
                     {"type": "contains", "value": "pnpm"}]
    assert report.model["dropped_rules"] == 1


def test_the_budget_caps_model_calls(homes) -> None:
    _release_sessions()
    store(session("x1", turn("regenerate the openapi client", ["make openapi"])),
          session("x2", turn("regen the openapi client please", ["make openapi"])))
    backend = _backend(confirm=json.dumps({"same_task": True}))
    report = run(assistant=Assistant(backend, max_calls=1))
    assert report.model["calls"] == 1 and len(backend.history) == 1


def test_nothing_new_means_no_model_call(homes) -> None:
    _release_sessions()
    backend = _backend(confirm=json.dumps({"same_task": True}))
    run(assistant=Assistant(backend))
    calls = len(backend.history)
    report = run(assistant=Assistant(backend))
    assert report.nothing_new and len(backend.history) == calls


def test_answers_are_cached_in_the_index(homes) -> None:
    backend = _backend(confirm=json.dumps({"same_task": True}))
    first = Assistant(backend)
    with Index.open() as index:
        assert first._ask(index.conn, "confirm", "sys", "prompts", {"type": "object"}) == {"same_task": True}
        with index.transaction():
            first.flush(index.conn, "2025-01-01T00:00:00.000Z")
        second = Assistant(backend)
        assert second._ask(index.conn, "confirm", "sys", "prompts", {"type": "object"}) == {"same_task": True}
    assert len(backend.history) == 1 and second.cache_hits == 1
