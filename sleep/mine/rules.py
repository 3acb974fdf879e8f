"""A task's judge, from the person's own feedback in its member sessions.

:func:`build_judge` returns a judge spec in ``skillopt_core`` terms: a rubric
(the intent, the person's requirements, answers they accepted) plus rule
checks read from explicit corrections:

- "no, use pnpm not npm" (about programs: a known one, or one the corrected
  turn ran): ``ran pnpm`` + ``not_ran npm``, judged by the commands the agent
  ran (:mod:`skillopt_core.tasks.judges.outcome`); "use `uv run pytest`, not
  bare pytest": ``ran uv run pytest``, ``check uv run pytest`` (a test runner)
  and ``not_ran pytest`` (a command pattern: ``uv run pytest`` does not match
  it). About anything else ("use British spelling, not American"):
  ``contains`` / ``not_contains`` (a word-absent ``regex`` where they clash);
- "never run terraform apply": ``not_ran terraform apply``;
- "don't touch the lockfile": ``not_touched`` the lock files of the common
  package managers; "don't edit src/gen/x.ts": ``not_touched`` that path;
- "give file:line first": a ``regex`` for a ``path:line`` reference at the
  start of a line; "reply in JSON": ``json_valid``; "under 500 characters":
  ``max_chars``;
- anything else the person insisted on becomes a rubric line.

A read-only replay turns the outcome rules back into text rules
(:func:`sleep.replay.modes.as_text_judge`).

A rule is kept only if it is valid, not trivially satisfied and not
impossible: it must not contradict another rule, must not fail every answer
the person accepted, and a format rule must not already hold for the answer
the person corrected. Pure functions; no model.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from skillopt_core import JudgeError, validate_judge_spec
from skillopt_core.tasks.judges.outcome import command_matches, is_check_command
from skillopt_core.tasks.judges.rules import word_absent_pattern
from skillopt_core.tasks.text_metrics import one_line
from sleep.rule_text import write_rule

MAX_RULES = 6
MAX_RUBRIC_LINES = 8
_GENERIC = frozenset("""a an the it this that these those them one another other same different something
anything everything else instead again here there what which way approach version thing stuff please me you
my your our its it's and or but so then now just only also more less""".split())
_TOKEN = r"[`'\"]?([A-Za-z0-9][\w.@/+:-]*)[`'\"]?"
_USE = re.compile(r"\buse\s+" + _TOKEN + r"(?:\s*,?\s+(?:instead\s+of|not|rather\s+than|over)\s+" + _TOKEN + r")?",
                  re.I)
_X_NOT_Y = re.compile(_TOKEN + r"\s*,?\s+not\s+" + _TOKEN, re.I)
_NEVER_RUN = re.compile(r"\b(?:don'?t|do\s+not|never|stop)\s+(?:run|running|use|using|call|calling|execute)\s+"
                        r"((?:[`'\"]?[\w.@/:-]+[`'\"]?)(?:\s+[\w.@/:-]+){0,2})", re.I)
_FILE_LINE = re.compile(r"\bfile\s*:\s*line\b|\bfile\s+and\s+line\b|\bpath:line\b", re.I)
_JSON = re.compile(r"\b(?:in|as|with|return|reply\s+with|output|only)\s+(?:valid\s+|plain\s+)?json\b", re.I)
_LIMIT = re.compile(r"\b(?:under|below|within|at\s+most|max(?:imum)?|no\s+more\s+than)\s+(\d{2,5})\s*"
                    r"(characters|chars|words)\b", re.I)
FILE_LINE_PATTERN = r"(?m)^\s*(?:[-*>]|\d+[.)])?\s*`?[\w./\\-]+\.\w+:\d+"


@dataclass
class Evidence:
    """What member sessions tell about a task (see sleep.mine.select)."""

    corrections: list[dict[str, Any]] = field(default_factory=list)  # {text, shell, answer}
    approvals: list[str] = field(default_factory=list)
    accepted: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)

    @classmethod
    def merge(cls, items: list[dict[str, Any]]) -> Evidence:
        e = cls()
        for d in items:
            e.corrections += d.get("corrections", [])
            e.approvals += d.get("approvals", [])
            e.accepted += [a for a in d.get("accepted", []) if a]
            e.rejected += [r for r in d.get("rejected", []) if r]
        e.accepted = [a for a in e.accepted if a not in e.rejected]  # an answer the person corrected somewhere
        return e


def _term(word: str | None) -> str | None:
    if not word:
        return None
    w = word.strip("`'\".,;:!?)(").strip()
    if len(w) < 2 or w.casefold() in _GENERIC or len(w) > 40:
        return None
    return w


# A command's name spelled out in backticks or quotes: `uv run pytest`.
_QUOTED = r"(?:`([^`]{1,60})`|'([^']{1,60})'|\"([^\"]{1,60})\")"
_USE_QUOTED = re.compile(r"\buse\s+" + _QUOTED, re.I)
_NOT_Y = re.compile(r"\b(?:instead\s+of|not|rather\s+than|over)\s+(?:(?:bare|plain|raw|just|only|regular|normal|"
                    r"vanilla|global|system|the|a)\s+)*" + r"(?:" + _QUOTED + r"|" + _TOKEN + r")", re.I)
_TOUCH = re.compile(r"\b(?:don'?t|do\s+not|never|stop)\s+(?:touch|touching|edit|editing|modify|modifying|change|"
                    r"changing|update|updating|regenerate|regenerating|rewrite|rewriting)\s+(?:the\s+|any\s+)?"
                    r"(lock\s*files?|lockfiles?|" + _QUOTED + r"|[\w./*-]+\.[\w*]+|[\w.-]+/[\w./*-]*)", re.I)
LOCK_FILES = ["package-lock.json", "pnpm-lock.yaml", "yarn.lock", "bun.lockb", "poetry.lock", "uv.lock",
              "Pipfile.lock", "Cargo.lock", "Gemfile.lock", "composer.lock", "go.sum", "*.lock"]
# Words that name a program, so "use X not Y" about them is about what the agent runs.
KNOWN_PROGRAMS = frozenset("""npm pnpm yarn bun npx node deno pip pip3 uv poetry pipenv conda pytest tox nox make cmake
cargo go gradle mvn bundle rake docker podman kubectl helm terraform tofu ansible git gh ruff black mypy pyright eslint
prettier tsc jest vitest mocha rspec python python3 just task bazel""".split())


def _quoted(m: re.Match, first: int) -> str | None:
    return next((g for g in m.groups()[first:first + 3] if g), None)


def _is_program(term: str | None, shell: list[str]) -> bool:
    if not term:
        return False
    head = term.split()[0]
    return head.casefold() in KNOWN_PROGRAMS or any(s.split()[:1] == [head] for s in shell)


# "run `pnpm test` before you say it's done": a verification the person asked for.
_VERIFY = re.compile(r"\b(?:run|rerun|re-run|check\s+with|verify\s+with)\s+" + _QUOTED +
                     r"\s+(?:before|after|to\s+(?:verify|check|make\s+sure|confirm)|first|each\s+time|every\s+time)",
                     re.I)
_USE_ANY = re.compile(r"\buse\s+(?:" + _QUOTED + r"|" + _TOKEN + r")", re.I)
_NEGATED = re.compile(r"(?:\bdon'?t|\bdo\s+not|\bnever|\bstop|\bnot|\bno\s+longer)\s+$", re.I)
# Words that end a command named in prose ("never run npm here").
_PROSE = frozenset("""here there again anymore ever in on for with please by directly manually yourself this that
the it on unless without when if because""".split())


def _command_phrase(text: str) -> str:
    words = []
    for word in text.split():
        if word.casefold().strip(".,;!?") in _PROSE:
            break
        words.append(word)
    return " ".join(words)


def _use_and_avoid(text: str) -> tuple[str | None, str | None]:
    """What the person said to use and what to avoid ("use `uv run pytest`, not bare pytest";
    "don't use npm, use pnpm")."""
    use = avoid = None
    rest = ""
    for m in _USE_ANY.finditer(text):
        term = " ".join(_quoted(m, 0).split()) if _quoted(m, 0) else _term(m.group(4))
        if not term:
            continue
        if _NEGATED.search(text[:m.start()]):
            avoid = avoid or term
        elif use is None:
            use, rest = term, text[m.end():]
    if use is not None and avoid is None:
        n = _NOT_Y.match(rest.lstrip(" ,;")) or _NOT_Y.search(rest[:80])
        if n:
            avoid = _quoted(n, 0) or _term(n.group(4))
    if use is None and avoid is None:
        m2 = _X_NOT_Y.search(text)
        if m2 and _term(m2.group(1)) and _term(m2.group(2)):
            use, avoid = _term(m2.group(1)), _term(m2.group(2))
    if avoid and use and avoid.casefold() == use.casefold():
        avoid = None
    return use, (" ".join(avoid.split()) if avoid else None)


def _rules_from(correction: dict[str, Any]) -> tuple[list[dict[str, Any]], list[str]]:
    text = " ".join(str(correction.get("text") or "").split())
    shell = [str(s) for s in correction.get("shell") or []]
    rules: list[dict[str, Any]] = []
    lines: list[str] = []
    use, avoid = _use_and_avoid(text)
    if use and (_is_program(use, shell) or _is_program(avoid, shell)):
        # About what the agent runs: judged by the commands it ran, not by what it said.
        rules.append({"type": "ran", "command": use})
        if is_check_command(use):
            rules.append({"type": "check", "command": use})
        if avoid:
            rules.append({"type": "not_ran", "command": avoid})
    elif avoid and not use:
        if _is_program(avoid, shell):  # else a rubric line: "don't use emojis" is no word to ban from the answer
            rules.append({"type": "not_ran", "command": avoid})
    elif use:
        rules.append({"type": "contains", "value": use})
        if avoid:
            plain = not clashes(avoid, use)
            rules.append({"type": "not_contains", "value": avoid} if plain
                         else {"type": "regex", "pattern": word_absent_pattern([avoid])})
    if avoid:
        lines.append(f"Use {use} rather than {avoid}." if use else f"Do not use {avoid}.")
    elif use:  # "use conventional commits: start the subject with feat:": the rule as written, not "Use conventional."
        lines.append(write_rule(text) or f"Use {use}." if not _is_program(use, shell) else f"Use {use}.")
    for cmd in _NEVER_RUN.findall(text):
        cmd = _command_phrase(cmd.strip("`'\" ").rstrip(".,;"))
        if not cmd or (avoid and cmd.casefold() == avoid.casefold()):
            continue
        if _term(cmd.split()[0]) and not (use and cmd.casefold() == use.casefold()):
            rules.append({"type": "not_ran", "command": cmd} if _is_program(cmd, shell) or len(cmd.split()) > 1
                         else {"type": "not_contains", "value": cmd})
            lines.append(f"Never run {cmd}.")
    for m in _VERIFY.finditer(text):
        command = " ".join((_quoted(m, 0) or "").split())
        if is_check_command(command) and {"type": "check", "command": command} not in rules:
            rules.append({"type": "check", "command": command})
            lines.append(f"Verify with {command} before finishing.")
    touch = _TOUCH.search(text)
    if touch:
        target = _quoted(touch, 1) or touch.group(1)
        paths_ = LOCK_FILES if re.match(r"lock\s*files?$|lockfiles?$", target, re.I) else [target.strip("`'\"")]
        rules.append({"type": "not_touched", "paths": paths_} if len(paths_) > 1
                     else {"type": "not_touched", "path": paths_[0]})
        target = target.strip("`'\"")
        lines.append(f"Do not change {'the ' if paths_ is LOCK_FILES else ''}{target}.")
    if _FILE_LINE.search(text):
        rules.append({"type": "regex", "pattern": FILE_LINE_PATTERN})
    if _JSON.search(text):
        rules.append({"type": "json_valid"})
    lim = _LIMIT.search(text)
    if lim:
        n = int(lim.group(1))
        rules.append({"type": "max_chars", "limit": n if lim.group(2).startswith("c") else n * 8})
    if not lines:
        written = write_rule(text)  # the rule as a person would write it; the quote when none is left
        lines.append(written or f"Respect this correction the person gave on an earlier answer: \"{text[:200]}\"")
    return rules, lines


def clashes(forbidden: str, required: str) -> bool:
    """Would an answer that uses ``required`` where ``forbidden`` names its program contain
    ``forbidden``? ("npm install" inside "pnpm install": yes; "terraform apply" and "terraform": no.)"""
    f, r = forbidden.casefold(), required.casefold()
    if f in r or (r in f and r != f.split()[0]):
        return True
    head = f.split()[0] if f.split() else f
    return head != r and f in r + f[len(head):]


def _holds(rule: dict[str, Any], answer: str) -> bool:
    kind = rule["type"]
    low = answer.casefold()
    if kind == "contains":
        return rule["value"].casefold() in low
    if kind == "not_contains":
        values = rule.get("values") or [rule["value"]]
        return not any(v.casefold() in low for v in values)
    if kind == "regex":
        return re.search(rule["pattern"], answer) is not None
    if kind == "max_chars":
        return len(answer) <= rule["limit"]
    if kind == "ran":  # accepted answers are text: the command named in it stands for the command run
        return rule["command"].casefold() in low
    if kind == "not_ran":
        return re.search(word_absent_pattern([rule["command"]]), answer, re.I) is not None
    if kind == "json_valid":
        try:
            json.loads(answer.strip())
        except ValueError:
            return False
        return True
    return True


def keep_rule(rule: dict[str, Any], kept: list[dict[str, Any]], ev: Evidence) -> str | None:
    """None if ``rule`` may join ``kept``; otherwise why not (invalid, duplicate,
    contradicts a kept rule, fails every accepted answer, already true of a corrected one)."""
    try:
        validate_judge_spec(rule)
    except JudgeError as exc:
        return f"invalid: {exc}"
    if rule in kept:
        return "duplicate"
    values = [v.casefold() for v in (rule.get("values") or [rule.get("value", "")]) if v]
    for other in kept:
        if other["type"] == rule["type"] and rule["type"] in ("contains", "not_contains"):
            o_values = {v.casefold() for v in (other.get("values") or [other.get("value", "")])}
            if set(values) <= o_values:
                return "duplicate"
    for other in kept:
        if {rule["type"], other["type"]} == {"contains", "not_contains"}:
            o_values = [v.casefold() for v in (other.get("values") or [other.get("value", "")])]
            pos, neg = (values, o_values) if rule["type"] == "contains" else (o_values, values)
            if any(clashes(n, p_) for p_ in pos for n in neg):
                return "contradicts another rule"
    if rule["type"] in ("ran", "not_ran"):
        for other in kept:
            if {rule["type"], other["type"]} == {"ran", "not_ran"}:
                pos, neg = (rule, other) if rule["type"] == "ran" else (other, rule)
                if command_matches(pos["command"], neg["command"]):
                    return "contradicts another rule"
    if rule["type"] == "not_contains" and any(len(v) > 80 for v in values):
        return "trivially satisfied"
    if ev.accepted and not any(_holds(rule, a) for a in ev.accepted):
        return "fails every accepted answer"
    is_format = rule["type"] in ("json_valid", "max_chars") or rule.get("pattern") == FILE_LINE_PATTERN
    if is_format and ev.rejected and all(_holds(rule, r) for r in ev.rejected):
        return "already true of the corrected answer"
    return None


def describe(rule: dict[str, Any]) -> str:
    kind = rule["type"]
    if kind in ("contains", "not_contains"):
        values = rule.get("values") or [rule["value"]]
        return f"{kind} " + ", ".join(f'"{v}"' for v in values)
    if kind == "regex":
        if rule["pattern"] == FILE_LINE_PATTERN:
            return "regex (file:line first)"
        m = re.match(r"\^\(\?!\[\\s\\S\]\*\(\?<!\[\\w\.-\]\)\(\?:(.*)\)\(\?!\[\\w-\]\)\)$", rule["pattern"])
        if m:
            words = [w.replace("\\s+", " ").replace("\\", "") for w in m.group(1).split("|")]
            return "regex (not the word" + ("s " if len(words) > 1 else " ") + ", ".join(f'"{w}"' for w in words) + ")"
        return "regex"
    if kind == "max_chars":
        return f"max_chars {rule['limit']}"
    if kind in ("ran", "not_ran", "check"):
        return f'{kind} "{rule["command"]}"'
    if kind in ("touched", "not_touched"):
        globs = rule.get("paths") or [rule["path"]]
        return f"{kind} " + (f'"{globs[0]}"' if len(globs) == 1 else f"{len(globs)} lock files"
                             if globs == LOCK_FILES else ", ".join(f'"{g}"' for g in globs))
    return kind


def summary(spec: list[dict[str, Any]]) -> str:
    """One line: ``rubric + 2 rules: contains "pnpm", not_contains "npm install"``."""
    rules = [r for r in spec if r["type"] != "rubric"]
    head = "rubric" if any(r["type"] == "rubric" for r in spec) else "rules only"
    if not rules:
        return head
    noun = "rule" if len(rules) == 1 else "rules"
    return f"{head} + {len(rules)} {noun}: " + ", ".join(describe(r) for r in rules)


def build_judge(intent: str, prompt: str, ev: Evidence) -> tuple[list[dict[str, Any]], list[str]]:
    """The judge spec (a rubric first, then the kept rules) and the rubric's requirement lines."""
    rules: list[dict[str, Any]] = []
    lines: list[str] = []
    for c in ev.corrections:
        found, said = _rules_from(c)
        for rule in found:
            if len(rules) < MAX_RULES and keep_rule(rule, rules, ev) is None:
                rules.append(rule)
        lines += [x for x in said if x not in lines]
    return assemble(intent, prompt, ev, lines[:MAX_RUBRIC_LINES], rules), lines[:MAX_RUBRIC_LINES]


def assemble(intent: str, prompt: str, ev: Evidence, lines: list[str], rules: list[dict[str, Any]]
             ) -> list[dict[str, Any]]:
    parts = [f"The person repeatedly asks for this task; one of their requests was: \"{one_line(prompt, 600)}\"",
             f"Intent: {intent}",
             "A good response does what was asked, completely and correctly, for this project, "
             "and says plainly what it did and what it found."]
    if lines:
        parts.append("Requirements the person stated when correcting earlier answers:")
        parts += [f"- {x}" for x in lines]
    if ev.accepted:
        parts.append("Answers the person accepted looked like:")
        parts += [f"- \"{one_line(a, 300)}\"" for a in ev.accepted[:2]]
    parts.append("Score 10 when the task is done and every requirement holds; score low when a requirement "
                 "is ignored or the answer does something else.")
    rubric = {"type": "rubric", "rubric": "\n".join(parts)}
    return [rubric, *rules]
