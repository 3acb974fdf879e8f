"""The multi-turn text-game loop shared by the ``textworld`` and ``alfworld``
envs: observation → action, up to ``max_steps`` (default 50) steps, scored by
whether the game says ``won``.

An env subclasses :class:`TextGameEnv` and implements :meth:`open_game`,
returning a started game (a ``textworld.gym`` environment). One episode:

1. the game is reset; the target sees the opening observation and the goal;
2. each turn the target replies, its action is the text after the last
   ``Action:`` (else its first line), and the game's answer is the next
   observation; the last ``history`` turns are kept in the conversation;
3. the episode ends when the game is done (won or lost) or after
   ``max_steps`` actions.

The transcript (observations and actions) is the rollout's response; its last
line records the outcome the game reported (``Result: won in 7 steps`` /
``Result: not won after 50 steps``, with the game's points when it keeps
score), and :meth:`TextGameEnv.score` reads it back: hard = won; soft = won,
or the share of the game's points when it has any. Game steps run in a worker
thread, off the event loop.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, ClassVar

from skillopt_core.backends import Completion, CompletionRequest, Message
from skillopt_core.envs.base import PromptEnv
from skillopt_core.tasks.task import Score, Task

_ACTION = re.compile(r"action\s*:\s*(.+)", re.IGNORECASE)
_RESULT = re.compile(r"^Result: (won|not won)(?: in| after) (\d+) steps?(?:; points (\d+)/(\d+))?$", re.MULTILINE)
MAX_OBSERVATION_CHARS = 1500

INSTRUCTION = """\
You are playing a text game. Each turn, reply with the one command you want to run, on a final line
of the form: Action: <command>"""


def parse_action(reply: str) -> str:
    matches = _ACTION.findall(reply)
    text = matches[-1] if matches else next((line for line in reply.splitlines() if line.strip()), "")
    return " ".join(text.strip().strip("`*\"'.").split()).lower()


def clean_observation(text: str) -> str:
    """The game's text without TextWorld's title banner and prompt marks."""
    text = text.replace("\r", "")
    if "-=" in text:
        text = text[text.index("-="):]
    text = re.sub(r"\n\s*>\s*", "\n", text)
    return "\n".join(line.rstrip() for line in text.strip().splitlines() if line.strip())[:MAX_OBSERVATION_CHARS]


def _int_option(options: Any, key: str, default: int) -> int:
    value = options.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"env.options.{key} must be a positive whole number, got {value!r}.")
    return value


class TextGameEnv(PromptEnv):
    """Base of the text-game envs; see the module docstring."""

    instruction = INSTRUCTION
    GAME_OPTIONS: ClassVar[Mapping[str, str]] = {
        "max_steps": "actions per episode (default 50)",
        "history": "past turns kept in the conversation (default 8)",
    }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.max_steps = _int_option(self.options, "max_steps", 50)
        self.history = _int_option(self.options, "history", 8)

    # -- to implement ------------------------------------------------------ #

    def open_game(self, task: Task) -> Any:
        """A ``textworld.gym``-style environment for ``task`` (reset/step/close)."""
        raise NotImplementedError

    # -- the loop ------------------------------------------------------------ #

    def build_request(self, skill_text: str, task: Task, max_tokens: int) -> CompletionRequest:
        # The opening request names the game; the episode adds what the game shows.
        return CompletionRequest(messages=(Message("user", task.prompt),), system=self.system_prompt(skill_text),
                                 max_tokens=max_tokens, role="target", stage="rollout",
                                 skill=skill_text if skill_text.strip() else None)

    def _turn_text(self, observation: str, info: dict[str, Any], first: bool) -> str:
        parts = []
        if first and info.get("objective"):
            parts.append(f"Goal: {info['objective'].strip()}")
        parts.append(observation)
        commands = info.get("admissible_commands")
        if commands:
            parts.append("Commands you can use now: " + ", ".join(commands))
        return "\n\n".join(parts)

    async def run_episode(self, target: Any, request: CompletionRequest, task: Task) -> Completion:
        game = await asyncio.to_thread(self.open_game, task)
        try:
            observation, info = await asyncio.to_thread(game.reset)
            observation = clean_observation(observation)
            opening = Message("user", f"{task.prompt}\n\n{self._turn_text(observation, info, True)}")
            turns: list[Message] = []
            transcript = [f"Observation: {observation}"]
            steps, done = 0, False
            while steps < self.max_steps and not done:
                window = turns[-2 * self.history:] if self.history else []
                reply = await target.complete(replace(request, messages=(opening, *window)))
                action = parse_action(reply.text)
                observation, _, done, info = await asyncio.to_thread(game.step, action or "look")
                observation = clean_observation(observation)
                steps += 1
                transcript += [f"Action: {action}", f"Observation: {observation}"]
                turns += [Message("assistant", reply.text), Message("user", self._turn_text(observation, info, False))]
            won = bool(info.get("won"))
            points = ""
            if info.get("max_score"):
                points = f"; points {int(info.get('score') or 0)}/{int(info['max_score'])}"
            transcript.append(f"Result: {'won in' if won else 'not won after'} {steps} "
                              f"step{'s' if steps != 1 else ''}{points}")
            return Completion(text="\n".join(transcript), model=target.model)
        finally:
            await asyncio.to_thread(game.close)

    async def score(self, task: Task, response: str) -> Score:
        results = _RESULT.findall(response)
        if not results:
            return Score(0.0, 0.0, "The episode did not finish (no result recorded).")
        outcome, steps, got, most = results[-1]
        if outcome == "won":
            return Score(1.0, 1.0, f"Won the game in {steps} steps.")
        soft = int(got) / int(most) if most and int(most) else 0.0
        extra = f", {got} of {most} points" if most else ""
        return Score(0.0, min(soft, 1.0), f"Did not win within {steps} steps{extra}.")
