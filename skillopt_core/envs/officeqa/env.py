"""The OfficeQA env: questions over U.S. Treasury Bulletin documents, scored
by normalised exact match (hard) and token F1 (soft) on the final ``Answer:``.

Data (``env.data_path``): ``officeqa_pro.csv`` / ``officeqa_full.csv`` from
``databricks/officeqa`` (columns ``uid``, ``question``, ``answer``,
``source_docs``, ``source_files``, ``difficulty``), or a JSON array with those
fields; ``source_files`` is one parsed file name or a list of them. The
parsed documents (``treasury_bulletins_parsed/transformed/*.txt``) are the
corpus: ``env.options.corpus``, else that folder next to the questions file,
else the bundled sample's corpus.

Offline modes (``env.options.mode``):

- ``tools`` (default): the agent gets the question and the corpus file list,
  and may call glob / read / grep (:mod:`.tools`) for up to
  ``max_tool_calls`` turns before answering;
- ``pages``: the text of the question's source files is put in the prompt
  (cut to ``max_context_chars``), one turn.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

from skillopt_core.backends import Completion, CompletionRequest, Message
from skillopt_core.envs import register_env
from skillopt_core.envs.base import PromptEnv, score_final_answer
from skillopt_core.envs.officeqa.tools import Corpus, tool_calls
from skillopt_core.tasks.collect import TaskCollector
from skillopt_core.tasks.task import Score, Task

PACKAGE_DIR = Path(__file__).resolve().parent
SAMPLE_PATH = PACKAGE_DIR / "data" / "officeqa_sample.csv"
SAMPLE_CORPUS = PACKAGE_DIR / "data" / "corpus"
JUDGE = {"type": "f1"}

TOOLS_INSTRUCTION = """\
You can look things up in the documents with tools, one per line, before answering:
  Tool: glob <pattern>            list document files
  Tool: read <file> [first] [last]  show numbered lines of a file
  Tool: grep <regex> [file glob]    find matching lines
Each tool's output comes back in the next message. When you know the answer, end with one final line
of the form: Answer: <answer>"""
PAGES_INSTRUCTION = "End your reply with one final line of the form: Answer: <answer>"


def _list(value: Any) -> list[str]:
    if isinstance(value, list):
        return [str(v).strip() for v in value if str(v).strip()]
    text = str(value or "").strip()
    if text.startswith("["):
        try:
            return _list(json.loads(text))
        except json.JSONDecodeError:
            pass
    return [p.strip() for p in text.replace("\n", ",").split(",") if p.strip()]


def read_questions(path: Path) -> tuple[list[Task], list[str]]:
    if not path.is_file():
        raise FileNotFoundError(f"OfficeQA questions not found: {path}. Check env.data_path.")
    if path.suffix.lower() == ".json":
        rows = json.loads(path.read_text(encoding="utf-8"))
        rows = rows if isinstance(rows, list) else []
    else:
        with path.open(encoding="utf-8", newline="") as fh:
            rows = list(csv.DictReader(fh))
    found = TaskCollector("uid")
    for number, row in enumerate(rows, start=1):
        found.add(f"{path.name}: row {number}", _row_to_task, row)
    return found.result()


def _row_to_task(row: Any) -> Task:
    get = row.get if isinstance(row, dict) else (lambda key: None)
    uid = str(get("uid") or get("id") or "").strip()
    question = str(get("question") or "").strip()
    answer = str(get("answer") or get("ground_truth") or "").strip()
    if not uid or not question or not answer:
        raise ValueError("needs uid, question and answer")
    difficulty = str(get("difficulty") or get("category") or "").strip()
    return Task(id=uid, prompt=question, reference=(answer,), judge=dict(JUDGE),
                tags=tuple(t for t in ("officeqa", difficulty) if t),
                metadata={"source_files": _list(get("source_files")), "source_docs": _list(get("source_docs"))})


@register_env("officeqa")
class OfficeQAEnv(PromptEnv):
    name = "officeqa"
    seed_skill = (PACKAGE_DIR / "seed_skill.md").read_text(encoding="utf-8")
    OPTIONS: ClassVar[Mapping[str, str]] = {
        "mode": "tools (glob/read/grep over the parsed documents, default) or pages (source pages in the prompt)",
        "corpus": "folder of parsed documents (default: treasury_bulletins_parsed/transformed next to the data)",
        "max_tool_calls": "tool turns before the agent must answer (default 6)",
        "max_context_chars": "pages mode: characters of source text shown (default 12000)",
    }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.mode = self.options.get("mode", "tools")
        if self.mode not in ("tools", "pages"):
            raise ValueError(f"env.options.mode must be tools or pages, got {self.mode!r}.")
        self.instruction = TOOLS_INSTRUCTION if self.mode == "tools" else PAGES_INSTRUCTION
        self.max_tool_calls = self.max_context_chars = 0
        for key, default in (("max_tool_calls", 6), ("max_context_chars", 12000)):
            value = self.options.get(key, default)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"env.options.{key} must be a positive whole number, got {value!r}.")
            setattr(self, key, value)
        self.corpus = Corpus(self._corpus_dir())

    def _corpus_dir(self) -> Path:
        if self.options.get("corpus"):
            folder = Path(str(self.options["corpus"])).expanduser()
        elif self.inputs.data_path is not None:
            folder = self.inputs.data_path.parent / "treasury_bulletins_parsed" / "transformed"
        else:
            folder = SAMPLE_CORPUS
        if not folder.is_dir():
            raise FileNotFoundError(f"OfficeQA corpus folder not found: {folder}. Set env.options.corpus to the "
                                    "parsed documents (treasury_bulletins_parsed/transformed).")
        return folder

    def read_tasks(self) -> list[Task]:
        tasks, problems = read_questions(self.inputs.data_path or SAMPLE_PATH)
        self.load_problems.extend(problems)
        return tasks

    def user_message(self, task: Task) -> str:
        if self.mode == "pages":
            texts = []
            for name in task.metadata["source_files"]:
                found = self.corpus.run("read", json.dumps(name))
                texts.append(f"=== {name} ===\n{found}")
            return f"{chr(10).join(texts)[: self.max_context_chars]}\n\nQuestion: {task.prompt}"
        files = self.corpus.files()
        shown = ", ".join(files[:50]) + (f" and {len(files) - 50} more" if len(files) > 50 else "")
        return f"Documents: {shown}\n\nQuestion: {task.prompt}"

    async def run_episode(self, target: Any, request: CompletionRequest, task: Task) -> Completion:
        """Tool turns (tools mode) until an ``Answer:`` or ``max_tool_calls``; the
        response is the log of tool calls and the final reply."""
        if self.mode == "pages":
            return await target.complete(request)
        messages = list(request.messages)
        log: list[str] = []
        for turn in range(self.max_tool_calls + 1):
            reply = await target.complete(replace(request, messages=tuple(messages)))
            calls = tool_calls(reply.text)
            if not calls or "answer:" in reply.text.lower() or turn == self.max_tool_calls:
                return Completion(text="\n".join([*log, reply.text]), model=reply.model)
            outputs = []
            for name, args in calls:
                log.append(f"[tool call] {name} {args}")
                outputs.append(f"Tool {name} {args}:\n{self.corpus.run(name, args)}")
            messages += [Message("assistant", reply.text), Message("user", "\n\n".join(outputs))]
        raise AssertionError("unreachable")

    async def score(self, task: Task, response: str) -> Score:
        return await score_final_answer(self.judge_for(task), task, response)
