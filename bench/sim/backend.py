"""The simulated target and optimizer as one backend (registered as ``sim``).

The backend's model name is the world's key (:attr:`WorldSpec.key`); the
world must be registered in this process first (:func:`register_world`, which
the ``sim`` env also does). Requests are answered by role: ``target``
rollouts pass or fail as :meth:`World.passes` draws, optimizer stages answer
as :mod:`bench.sim.optimizer` does. Every answer is a pure function of the
request, so runs are repeatable and resumable. ``latency_s`` adds a fixed
sleep to each call (the overhead benchmark).
"""

from __future__ import annotations

import asyncio
import hashlib
import random

from skillopt_core.backends import BackendSpec, Completion, CompletionRequest, RequestFailed, Usage, register_backend

from bench.sim import optimizer as opt
from bench.sim.env import pass_token
from bench.sim.world import World, world_named


class SimBackend:
    name = "sim"

    def __init__(self, world: World, latency_s: float = 0.0) -> None:
        self.world = world
        self.model = world.spec.key
        self.latency_s = latency_s
        self.target_calls = 0  # drives the fallible judge's drift

    def describe(self) -> str:
        return f"simulated world {self.model} (target and optimizer; not a model)"

    def _rng(self, request: CompletionRequest) -> random.Random:
        digest = hashlib.sha256(f"{self.world.spec.seed}:{request.seed}:{request.prompt_text}".encode()).hexdigest()
        return random.Random(digest)

    def answer(self, request: CompletionRequest) -> str:
        if request.role == "target":
            item = self.world.item_in(request.messages[-1].content)
            if item is None:
                raise RequestFailed("sim target: the prompt names no [sim item N]")
            prompt = request.prompt_text
            judge = self.world.spec.judge
            shift = judge.drift * self.target_calls / 1000 if judge is not None else 0.0
            self.target_calls += 1
            skill = request.system or ""
            if judge is None:
                ok, grade = self.world.judged(item, skill, request.seed, prompt, shift)
                return f"Answer: {pass_token(item.index)} [alt pass]" if ok else "Answer: not sure"
            # A fallible judge is a model that reads the answer (bench.sim.env's sim_judge): the pass
            # token is its verdict unswayed by claims, [swayed] marks a fail it passes when it reads
            # the answer's claim sentence(s), written on their own lines below.
            ok, swayed, grade = self.world.judged_parts(item, skill, request.seed, prompt, shift)
            text = f"Answer: {pass_token(item.index)}." if ok else "Answer: not sure."
            if swayed and not ok:
                text += " [swayed]"
            if self.world.holdout_judged(item, skill, request.seed, prompt, shift):  # the held-out judge's verdict
                text += " [alt pass]"
            if grade is not None:
                text += f" [grade {round(grade * 10)}/10]"
            return "\n".join((text, *self.world.claim_sentences(skill)))
        prompt = "\n".join(m.content for m in request.messages)
        rng = self._rng(request)
        if request.stage == "reflect":
            return opt.reflect_reply(self.world, prompt, rng)
        if request.stage == "merge":
            return opt.merge_reply(self.world, prompt, rng)
        if request.stage == "rank":
            return opt.rank_reply(self.world, prompt, rng)
        if request.stage == "slow_update":
            return opt.guidance_reply(self.world, prompt, rng)
        if request.stage == "meta_skill":
            return opt.notes_reply(self.world, prompt)
        raise RequestFailed(f"sim backend: no behaviour for role {request.role!r}, stage {request.stage!r}")

    async def complete(self, request: CompletionRequest) -> Completion:
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        text = self.answer(request)
        return Completion(text, Usage(len(request.prompt_text) // 4, len(text) // 4, 0.0), self.model, self.latency_s)


@register_backend("sim")
def _create(spec: BackendSpec) -> SimBackend:
    return SimBackend(world_named(spec.model or ""))


