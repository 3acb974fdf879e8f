"""The DocVQA env: answer a question about one document page image.

The page goes with the question as an image (:class:`ImageAttachment`) to
backends that can see, and as its OCR text to those that cannot
(``env.options.input``: ``auto``, the default, sends both and lets the backend
choose; ``image`` sends the image alone, so a backend that cannot see refuses
with a clear message; ``ocr`` sends the OCR text alone).

Score: ANLS, the DocVQA metric: for each accepted answer, the normalised
Levenshtein similarity ``1 - dist / max(len)`` of the lowercased, whitespace-
collapsed strings, 0 when below the threshold (0.5); the best over the
accepted answers. soft = ANLS; hard = 1 when ANLS >= 0.999 (an exact match
up to case and spacing). Only the text after the last ``Answer:`` is scored.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar

from rapidfuzz.distance import Levenshtein

from skillopt_core.backends import CompletionRequest, ImageAttachment, Message
from skillopt_core.envs import register_env
from skillopt_core.envs.base import PromptEnv
from skillopt_core.envs.docvqa.loader import ocr_text, read_tasks
from skillopt_core.tasks.task import Score, Task
from skillopt_core.tasks.text_metrics import extract_final_answer

PACKAGE_DIR = Path(__file__).resolve().parent
SAMPLE_PATH = PACKAGE_DIR / "data" / "docvqa_sample.csv"
ANLS_THRESHOLD = 0.5
HARD_AT = 0.999


def _norm(text: str) -> str:
    return " ".join(str(text).strip().lower().split())


def anls(prediction: str, answers: tuple[str, ...] | list[str], threshold: float = ANLS_THRESHOLD) -> float:
    """Average normalised Levenshtein similarity of one prediction (the best over the answers)."""
    pred = _norm(prediction)
    best = 0.0
    for gold in answers:
        ref = _norm(gold)
        if not pred and not ref:
            return 1.0
        if not pred or not ref:
            continue
        distance = Levenshtein.distance(pred, ref) / max(len(pred), len(ref))
        best = max(best, 0.0 if distance >= threshold else 1.0 - distance)
    return best


@lru_cache(maxsize=256)
def _page(path: str, media_type: str) -> ImageAttachment:
    image = Path(path)
    return ImageAttachment(media_type, image.read_bytes(), text=ocr_text(image), name=image.name)


@register_env("docvqa")
class DocVQAEnv(PromptEnv):
    name = "docvqa"
    seed_skill = (PACKAGE_DIR / "seed_skill.md").read_text(encoding="utf-8")
    instruction = "End your reply with one final line of the form: Answer: <the answer, copied from the document>"
    OPTIONS: ClassVar[Mapping[str, str]] = {
        "input": "auto (image, with OCR for backends that cannot see), image, or ocr (default auto)",
        "threshold": f"ANLS threshold (default {ANLS_THRESHOLD})",
    }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.input = self.options.get("input", "auto")
        if self.input not in ("auto", "image", "ocr"):
            raise ValueError(f"env.options.input must be auto, image or ocr, got {self.input!r}.")
        threshold = self.options.get("threshold", ANLS_THRESHOLD)
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 < threshold <= 1:
            raise ValueError(f"env.options.threshold must be a number in (0, 1], got {threshold!r}.")
        self.threshold = float(threshold)

    def read_tasks(self) -> list[Task]:
        tasks, problems = read_tasks(self.inputs.data_path or SAMPLE_PATH)
        if self.input == "ocr":
            kept = []
            for task in tasks:
                if ocr_text(Path(task.metadata["image"])):
                    kept.append(task)
                else:
                    problems.append(f"question {task.id}: no OCR text for {Path(task.metadata['image']).name} "
                                    "(env.options.input: ocr)")
            tasks = kept
        self.load_problems.extend(problems)
        return tasks

    def build_request(self, skill_text: str, task: Task, max_tokens: int) -> CompletionRequest:
        page = _page(task.metadata["image"], task.metadata["media_type"])
        if self.input == "ocr":
            message = Message("user", f"Document page (OCR text):\n{page.text}\n\nQuestion: {task.prompt}")
        else:
            if self.input == "image":
                page = ImageAttachment(page.media_type, page.data, name=page.name)
            message = Message("user", f"Question about the attached document page: {task.prompt}", images=(page,))
        return CompletionRequest(messages=(message,), system=self.system_prompt(skill_text) or None,
                                 max_tokens=max_tokens, role="target", stage="rollout",
                                 skill=skill_text if skill_text.strip() else None)

    async def score(self, task: Task, response: str) -> Score:
        extracted = extract_final_answer(response)
        if not extracted.text:
            return Score(0.0, 0.0, "No answer found; end with 'Answer: <answer>'.")
        value = anls(extracted.text, task.reference, self.threshold)
        hard = 1.0 if value >= HARD_AT else 0.0
        note = "" if extracted.found else " (no 'Answer:' line, so the first line was scored)"
        if hard:
            return Score(1.0, value, "The answer matches the document." + note)
        if value > 0:
            return Score(0.0, value,
                         f"The answer is close to the expected text (ANLS {value:.2f}) but not exact{note}.")
        return Score(0.0, 0.0, f"The answer does not match the document text (ANLS 0){note}.")
