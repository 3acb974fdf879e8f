"""Structured concurrency for the engine's fan-outs (rollouts, reflection
minibatches): when one task fails or the caller is cancelled, the siblings
still running are cancelled and awaited before the error propagates, so no
model call outlives the step that started it."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterable
from typing import TypeVar

T = TypeVar("T")


async def gather_or_cancel(awaitables: Iterable[Awaitable[T]]) -> list[T]:
    """Like ``asyncio.gather`` (results in order), but the first exception, or
    a cancellation of the caller, cancels every task that is still running and
    waits for them to finish before it is raised."""
    tasks = [asyncio.ensure_future(a) for a in awaitables]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        await cancel_all(tasks)
        raise


async def cancel_all(tasks: Iterable[asyncio.Future]) -> None:
    """Cancel ``tasks`` and wait until every one has finished; the errors of
    those that failed are retrieved here (the caller raised the first one)."""
    tasks = list(tasks)
    pending = [t for t in tasks if not t.done()]
    for task in pending:
        task.cancel()
    if pending:
        await asyncio.gather(*pending, return_exceptions=True)
    for task in tasks:
        if not task.cancelled():
            task.exception()  # marks it retrieved: no "exception was never retrieved" at exit
