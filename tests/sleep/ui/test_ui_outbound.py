"""No secret in a run directory, a proposal, a night or a mined task reaches a dashboard page.

Secrets of kinds the redactor knows are planted in every text the trainer, the proposal
library, the nightly cycle and the miner write (every string of every JSON file of a run,
the skill and notes files, every event, the proposals' reports and records, the nights'
and tasks' rows, the library's error messages and the staged diff); then every page the
dashboard links to (and the raw skills, the fragments and the event stream) is fetched
and searched. Each page must still show the rest of the text around the marker.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from collections import deque
from pathlib import Path

import orjson
import pytest
from proposal_testutil import staged
from ui_testutil import client, post, run_links

from sleep.index import Index
from sleep.ui import outbound

SECRETS = ("ghp_R8cY2mK7qT4wZ9xN3vB6jH1sD5fL0pA8eU2i", "AKIAQYLPMN5HHHFPZAM2",
           "xoxb-2468013579-1357924680-Zq8wN3vK5tR7yB2mX4cL6pD9")
# Maps whose keys are data (item ids, roles, stage names), not the trainer's field names.
DATA_KEYED = {"deltas", "groups", "usage", "timings", "backends", "splits", "task_deltas", "task_intents", "models",
              "optimizer", "target", "judge"}
CLUE = "PLANTED"  # the text around each secret, which the pages must still show


def _secret(i: int) -> str:
    return SECRETS[i % len(SECRETS)]


def plant(value, key: str = "", counter=[0]):
    """``value`` with a secret added to every string (and to the keys of data-keyed maps)."""
    if isinstance(value, str):
        counter[0] += 1
        return f"{value} {CLUE} {_secret(counter[0])}"
    if isinstance(value, list):
        return [plant(v, key) for v in value]
    if isinstance(value, dict):
        keyed = key in DATA_KEYED
        return {(f"{k}-{_secret(len(k))}" if keyed else k): plant(v, k) for k, v in value.items()}
    return value


def _plant_run(run: Path) -> None:
    for path in run.rglob("*"):
        if path.is_dir() or path.name in ("config.yaml", "state.json", "dataset.json", "rollout_cache.jsonl"):
            continue
        if path.suffix == ".json":
            path.write_text(json.dumps(plant(json.loads(path.read_text()))))
        elif path.name == "items.jsonl":  # the run's tasks: every text planted, the ids kept
            lines = [json.loads(line) for line in path.read_text().splitlines()]
            path.write_text("".join(json.dumps({**plant(t), "id": t["id"]}) + "\n" for t in lines))
        elif path.suffix == ".jsonl":
            lines = [json.loads(line) for line in path.read_text().splitlines()]
            # keep the kinds and the levels: the pages choose events by them
            kept = [{**plant(e), "event": e["event"], **({"level": e["level"]} if "level" in e else {})} for e in lines]
            kept.insert(1, {"event": "notice", "level": "warning", "text": f"{CLUE} {_secret(0)}",
                            "at": lines[0]["at"]})
            path.write_text("".join(json.dumps(e) + "\n" for e in kept))
        elif path.suffix == ".md":
            path.write_text(path.read_text() + f"\n- {CLUE} {_secret(1)} in the skill\n")
    history = json.loads((run / "history.json").read_text())
    for h in history:  # the numbers stay numbers; the texts carry the secrets
        h["action"] = h["action"].split(" ")[0]
    (run / "history.json").write_text(json.dumps(history))


def _plant_index(index: Path, run: Path, pid: str) -> None:
    with sqlite3.connect(index) as db:
        report = orjson.loads(db.execute("SELECT report FROM proposals WHERE id = ?", (pid,)).fetchone()[0])
        side = {"answer": "Ran it.", "passed": False, "score": 0.0, "feedback": "ran npm install",
                "commands": [{"command": "npm install", "exit_code": 0, "denied": False}],
                "files": [{"path": "package-lock.json", "change": "added"}],
                "checks": [{"command": "pnpm test", "passed": False, "exit_code": 1}]}
        report["evidence"] = [{"task": "t1-ab", "prompt": "install the deps", "before": side, "after": side}]
        planted = plant(report)
        planted["notes"] = [f"{CLUE} {_secret(2)}"]
        db.execute("UPDATE proposals SET report = ?, skill_name = ?, reason = ? WHERE id = ?",
                   (orjson.dumps(planted), f"tests {CLUE} {_secret(0)}", f"{CLUE} {_secret(1)}", pid))
        row = db.execute("SELECT * FROM proposals WHERE id = ?", (pid,)).fetchone()
        names = [d[1] for d in db.execute("PRAGMA table_info(proposals)")]
        other = dict(zip(names, row), id="b0rkedbranch", branch=f"skillopt/{_secret(2)}/2026-12-02")
        db.execute(f"INSERT INTO proposals ({', '.join(other)}) VALUES ({', '.join('?' * len(other))})",
                   tuple(other.values()))
        cycle_report = {"tasks": {"train": ["a", "b"], "val": ["c"]}, "scores": {"baseline": 0.5, "candidate": 0.75},
                        "usage": {"model_calls": 3, "tokens": 40}, "proposal": {"id": pid},
                        "reason": f"{CLUE} {_secret(0)}"}
        db.execute("INSERT INTO cycles (id, project, started_at, finished_at, stage, outcome, reason, run_dir, "
                   "proposal_id, report) VALUES (?,?,?,?,?,?,?,?,?,?)",
                   (f"night-{_secret(1)}", f"/p/app-{_secret(2)}", "2026-12-01T02:00:00Z", "2026-12-01T02:10:00Z",
                    f"gate {_secret(0)}", "staged", f"the reason: {CLUE} {_secret(1)}", str(run), pid,
                    json.dumps(cycle_report)))
        db.execute("INSERT INTO tasks (id, project, intent, prompt, judge, judge_summary, support, hosts, first_seen, "
                   "last_seen, enabled, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,'x','x')",
                   (f"t-{_secret(0)}", f"/p/app-{_secret(1)}", f"deploy with {CLUE} {_secret(2)}",
                    f"the prompt {CLUE} {_secret(0)}", "{}", f"rubric {CLUE} {_secret(1)}", 4,
                    json.dumps([f"claude-code {_secret(2)}"]), "2026-11-01T09:00:00Z", f"2026-11-28 {_secret(0)}", 1))


def _links(html: str) -> list[str]:
    found = re.findall(r'(?:href|data-events|data-fragments|action)="(/[^"]*)"', html)
    return [u.replace("&amp;", "&") for u in found if not u.startswith("/static/")]


@pytest.fixture
def planted(fresh_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    import sleep.proposals as proposals

    outbound.forget()
    repo, p = staged(tmp_path)
    with Index.open():
        pass
    _plant_run(fresh_run)
    _plant_index(Path(os.environ["SKILLOPT_HOME"]) / "sleep.sqlite3", fresh_run, p.id)
    real_show = proposals.show

    def show_with_planted_diff(pid, **kw):  # the staged diff as git shows it, plus a line holding a secret
        view = real_show(pid, **kw)
        return type(view)(**{**view.__dict__, "diff": view.diff + f"+- {CLUE} {_secret(2)}\n"})

    monkeypatch.setattr(proposals, "show", show_with_planted_diff)
    return fresh_run, p


def test_no_planted_secret_reaches_any_page(planted) -> None:
    run, p = planted
    c = client([run.parents[1]], stream_seconds=0.5)
    seen: dict[str, str] = {}
    queue = deque(["/", "/runs", "/proposals?all=1", "/nights", "/tasks", f"/proposals/{p.id}",
                   "/proposals/b0rkedbranch"])
    while queue and len(seen) < 400:
        url = queue.popleft()
        if url in seen:
            continue
        r = c.get(url)
        assert r.status_code in (200, 404), (url, r.status_code)
        seen[url] = r.text
        if "html" in r.headers.get("content-type", ""):
            queue.extend(u for u in _links(r.text) if u not in seen and "/adopt" not in u and "/reject" not in u
                         and not u.endswith("/labels"))  # the POST-only forms
    run_url = run_links(seen["/runs"])[0]
    for extra in (f"{run_url}/best?raw=1", f"{run_url}/skills/1?raw=1", f"{run_url}/events",
                  f"{run_url}/fragments", f"{run_url}/diff?a=0&b=6&context=all", "/runs.csv", "/runs.json",
                  "/compare?run=" + "/".join(run_url.split("/")[2:])):
        seen[extra] = c.get(extra).text
    refused = c.get(post(c, "/proposals/b0rkedbranch/adopt", {}).headers["location"])  # the library's message
    seen["adopt refused"] = refused.text
    assert 'role="alert"' in refused.text
    assert len(seen) > 30, sorted(seen)
    for url, text in seen.items():
        for secret in SECRETS:
            assert secret not in text and secret[4:16] not in text, (url, secret)
    shown = "".join(seen.values())
    for where in (run_url, f"{run_url}/steps/1", f"{run_url}/epochs/1", f"/proposals/{p.id}", "/nights", "/tasks",
                  f"{run_url}/events", "adopt refused"):
        assert "[REDACTED:" in seen[where], where  # the text around each secret is still shown
    assert shown.count(CLUE) > 50


PASSWORD = "Qx7vR2mLk9Zt4Wn"  # typed in a session as `mysql -p…`: redacted there, remembered as a hash
LATER = "Hj3kL9qWe2rT5yUi"


def _remember(homes, sid: str, prompt: str) -> None:
    import sleep_builders as b
    from sleep_testutil import run as harvest

    b.write_jsonl(b.claude_session_path(homes.claude, "/work/app", sid), [
        b.claude_user(prompt, sid=sid, cwd="/work/app", t=0)])
    assert harvest().secrets_remembered >= 1


def test_a_remembered_secret_in_a_form_the_rules_miss_reaches_no_page(fresh_run: Path, homes, monkeypatch) -> None:
    """Issue 19 §1, defence in depth: the dashboard filters every value a harvest ever redacted,
    also where it stands bare (the rules alone see nothing in "deploy / <password>")."""
    from sleep.redact import Redactor

    monkeypatch.setattr(outbound, "RECHECK_SECONDS", 0.0)
    _remember(homes, "k", f"load the fixtures with mysql -u deploy -p{PASSWORD} ledger")
    said = f"log in as deploy / {PASSWORD}"
    assert Redactor().redact(said) == said
    best = fresh_run / "best_skill.md"
    best.write_text(best.read_text() + f"\n- {said}\n- and later as admin / {LATER}\n")
    c = client([fresh_run.parents[1]])
    url = run_links(c.get("/runs").text)[0]
    page, raw = c.get(url).text, c.get(f"{url}/best?raw=1").text
    assert PASSWORD not in page + raw and "[REDACTED:known-secret]" in raw
    assert LATER in raw  # not yet remembered: shown as written
    _remember(homes, "k2", f"curl -u admin:{LATER} http://127.0.0.1/health")
    raw = c.get(f"{url}/best?raw=1").text  # the memoised answers are dropped once the index remembers more
    assert LATER not in raw and PASSWORD not in raw and raw.count("[REDACTED:known-secret]") == 2
