"""The core's advice, as a night's reader needs it.

When a training run stops early the core says how to resume it
(``skillopt train --resume RUN_DIR``). A night's run is not resumed that way:
resuming it would finish the training but never gate or stage anything. The
night's console gets the advice a night needs instead: run the night again.
"""

from __future__ import annotations

import dataclasses
import re

from skillopt_core import events

_RESUME = re.compile(r"; (?P<advice>[^;]*?): `skillopt train --resume [^`]*`\.?$")
_NIGHT_ADVICE = {
    "budget_exhausted": "nothing was staged; raise the night's budget (--set budget.max_calls=N or "
                        "budget.max_usd=D) and run `skillopt-sleep run` again",
    "cancelled": "nothing was staged; run `skillopt-sleep run` again to start the night over",
    "failed": "nothing was staged; fix the cause, then run `skillopt-sleep run` again",
}


def night_message(status: str, message: str) -> str:
    """``message`` with the core's resume advice replaced by the night's."""
    advice = _NIGHT_ADVICE.get(status, "nothing was staged; run `skillopt-sleep run` again")
    return _RESUME.sub(f"; {advice}.", message)


def night_subscriber(inner: events.Subscriber) -> events.Subscriber:
    """``inner`` with :class:`RunStopped` messages carrying the night's advice."""
    def forward(event: events.Event) -> None:
        if isinstance(event, events.RunStopped):
            event = dataclasses.replace(event, message=night_message(event.status, event.message))
        inner(event)
    return forward
