"""Judges: turn a response into a :class:`~skillopt_core.tasks.task.Score`.

A judge spec is a dict with a ``type`` and that type's options, a bare type
name (``"json_valid"``), or a list of specs that must all pass (hard = min of
the hards, soft = mean of the softs, feedback = the failing sentences joined).

Rule judges (:mod:`.rules`) run locally; the rubric judge (:mod:`.rubric`)
calls the judge-role backend:

=============  =====================================  ===============================
type           options                                 hard / soft
=============  =====================================  ===============================
exact          answers, case_sensitive                 normalised exact match (both)
f1             answers, threshold, case_sensitive      exact match (or F1 >= threshold)
                                                       / best token F1
contains       value / values, case_sensitive          all present / fraction present
not_contains   value / values, case_sensitive          none present / fraction absent
regex          pattern, flags                          ``re.search`` matches (both)
max_chars      limit                                   within limit / limit / length
json_valid     schema                                  valid (and matches schema) /
                                                       1, 0.5 if only the schema fails
rubric         rubric, scale, max_tokens               the judge model's pass / score
ran            command / commands                      a command the agent ran matches
not_ran        command / commands                      none of them ran
touched        path / paths (globs)                    a changed file matches
not_touched    path / paths (globs)                    no changed file matches
check          command (a test/lint/build runner)      it exited 0 after the rollout
=============  =====================================  ===============================

The outcome judges (:mod:`.outcome`) read the rollout's trajectory (what the
agent ran and changed), which the rollout makes visible while it scores; the
rubric judge sees a bounded summary of it besides the final text.

``exact`` and ``f1`` take their gold answers from ``answers`` or, when that
is absent, from ``task.reference`` (a string or a list of strings).

The set of types is open: :func:`register_judge` adds one (with its options
schema), in process or from a plugin package (:mod:`.spec`).

Feedback contract: one sentence the optimizer may read. It never contains
the regex, the gold answers or the forbidden strings (limits are fine). A bad
response never raises (it scores 0 and says why); only systemic failures do:
an invalid spec (:class:`JudgeError`, at build time) or an unreachable judge
backend (:class:`~skillopt_core.backends.BackendError`).
"""

from skillopt_core.tasks.judges.spec import (
    JudgeError,
    JudgeType,
    build_judge,
    judge_types,
    register_judge,
    validate_judge_spec,
)

__all__ = ["JudgeError", "JudgeType", "build_judge", "judge_types", "register_judge", "validate_judge_spec"]
