"""A pool-based proposer for the embedded-model study (registered as backend ``embedded_pool``).

The optimizer role of ``bench/embedded_evidence.py``. SmolLM2-135M is the
target; as optimizer it cannot write useful edits (issue 34: on SearchQA 2 of
10 replies were not JSON and no edit it wrote was ever accepted), so the
study asks a different question: given candidate edits of known intent, does
the loop, measuring them on the real model, keep the helpful ones and drop the
harmful ones?

:data:`POOL` was written before any study run, from the probe in
``skillopt_core/envs/unitqa/README.md`` and from what people commonly write
in such a skill, and labelled by intent (``helpful``, ``neutral``,
``harmful``); the labels are never shown to the engine. Each reflect call
answers one ``add`` edit drawn uniformly from the pool lines that are neither
in the current skill nor among the edits the prompt lists as already tried
(the reflect prompt shows both), with a generator seeded by the backend's seed
and the prompt, so a run is repeatable. When every line has been tried it
answers no edit. Merge and rank stages are not used (the study's config turns
them off); any other stage is an error.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from dataclasses import dataclass

from skillopt_core.backends import BackendSpec, Completion, CompletionRequest, RequestFailed, Usage, register_backend

__all__ = ["POOL", "PoolLine", "PoolProposer", "label_of"]


@dataclass(frozen=True)
class PoolLine:
    label: str  # helpful / neutral / harmful: the author's intent, measured by the study
    text: str


_EXAMPLES_ANSWER = (
    "Reply with exactly one line, 'The answer is: <number> km', and nothing else.\n\n"
    "Q: The canal is 5 kilometres long. How long is the canal?\nA: The answer is: 5 km\n\n"
    "Q: Tom walked 11 kilometres. How far did Tom walk?\nA: The answer is: 11 km"
)
_EXAMPLES_BARE = (
    "Examples:\n\n"
    "Q: The lake measures 8 kilometres across. How wide is the lake?\nA: 8 km\n\n"
    "Q: Ana ran 23 kilometers in the race. How far did Ana go in the race?\nA: 23 km"
)

POOL: tuple[PoolLine, ...] = (
    PoolLine("helpful", _EXAMPLES_ANSWER),
    PoolLine("helpful", _EXAMPLES_BARE),
    PoolLine("helpful", "Give every distance as the number followed by km, for example: 14 km."),
    PoolLine("neutral", "- Read the whole sentence before you answer."),
    PoolLine("neutral", "- Be polite and friendly."),
    PoolLine("neutral", "- Check that the number you give is the one in the sentence."),
    PoolLine("harmful", "- Write the unit in full, for example: 14 kilometres."),
    PoolLine("harmful", "- Before answering, explain step by step how you found the distance."),
    PoolLine("harmful", "- Give the distance in metres, for example: 14000 metres."),
)


def label_of(text: str) -> str | None:
    """The pool label of a skill line or edit text (None: not from the pool)."""
    for line in POOL:
        if line.text.strip() == text.strip():
            return line.label
    return None


def _tried(line: PoolLine, prompt: str) -> bool:
    # In the skill the text appears verbatim; in the "already tried" listing as a
    # JSON string cut at 300 characters, so its escaped start is what shows.
    return line.text in prompt or json.dumps(line.text)[1:80] in prompt


class PoolProposer:
    name = "embedded_pool"

    def __init__(self, seed: int = 0) -> None:
        self.model = f"pool-{len(POOL)}"
        self.seed = seed
        self.replies = 0

    def describe(self) -> str:
        return f"pool-based proposer: {len(POOL)} edit lines written before the study (not a model)"

    def answer(self, request: CompletionRequest) -> str:
        if request.stage != "reflect":
            raise RequestFailed(f"pool proposer: no behaviour for stage {request.stage!r} (turn merge/rank off)")
        prompt = request.prompt_text
        open_lines = [line for line in POOL if not _tried(line, prompt)]
        if not open_lines:
            return json.dumps({"edits": []})
        digest = hashlib.sha256(f"{self.seed}:{request.seed}:{prompt}".encode()).hexdigest()
        line = random.Random(digest).choice(open_lines)
        return json.dumps({"edits": [{"op": "add", "content": line.text, "rationale": "from the pool"}]})

    async def complete(self, request: CompletionRequest) -> Completion:
        text = self.answer(request)
        self.replies += 1
        return Completion(text, Usage(len(request.prompt_text) // 4, len(text) // 4, 0.0), self.model, 0.0)


@register_backend("embedded_pool")
def _create(spec: BackendSpec) -> PoolProposer:
    """``model`` may be ``seed<N>``: the proposer's own seed (a study gives each run its own)."""
    match = re.fullmatch(r"seed(\d+)", spec.model or "")
    return PoolProposer(int(match.group(1)) if match else 0)
