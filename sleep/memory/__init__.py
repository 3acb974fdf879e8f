"""Memory files as trainable, gated documents.

What each host loads for every request in a project (:mod:`.files`):
Claude Code ``CLAUDE.md``, Codex and OpenCode ``AGENTS.md``, Gemini CLI
``GEMINI.md``, Copilot ``.github/copilot-instructions.md``, Cursor
``.cursor/rules/*.mdc`` (an ``alwaysApply`` rule, its front matter kept). A
night routes each correction either to a skill or to the memory file
(:mod:`.route`, with the reason), replays the memory candidate with the
document where the host loads it (:mod:`.placement`: the CLI finds it in the
checkout; a chat backend sees it framed as the host frames it, ``@path``
imports included, :mod:`.imports`) and stages it as a proposal that changes
that one file (:mod:`.plan` makes the night's memory parts).
"""
