"""Images in requests: the request shapes of backends that can see, and the
text stand-in (or a clear refusal) for backends that cannot.

- OpenAI chat completions: a user message's ``content`` becomes a list of
  parts, the text first, then one ``{"type": "image_url", "image_url":
  {"url": "data:<media type>;base64,<data>"}}`` per image.
- Anthropic messages: ``content`` is a list of ``{"type": "image", "source":
  {"type": "base64", "media_type": ..., "data": ...}}`` blocks followed by the
  ``{"type": "text"}`` block (Anthropic advises images before the text).
- Every other backend (local, scripted, the agent CLIs) cannot see: when each
  image has a ``text`` stand-in, it is appended to the message in its place
  (marked as such); otherwise the request is refused with a
  :class:`RequestRejected` that says which backends can see.
"""

from __future__ import annotations

import base64
from dataclasses import replace
from typing import Any

from skillopt_core.backends.base import CompletionRequest, Message, RequestRejected

VISION_BACKENDS = ("openai", "azure-openai", "anthropic", "qwen", "minimax")


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def openai_content(message: Message) -> Any:
    if not message.images:
        return message.content
    parts: list[dict[str, Any]] = [{"type": "text", "text": message.content}]
    for image in message.images:
        parts.append({"type": "image_url", "image_url": {"url": f"data:{image.media_type};base64,{_b64(image.data)}"}})
    return parts


def anthropic_content(message: Message) -> Any:
    if not message.images:
        return message.content
    blocks: list[dict[str, Any]] = [
        {"type": "image", "source": {"type": "base64", "media_type": image.media_type, "data": _b64(image.data)}}
        for image in message.images
    ]
    blocks.append({"type": "text", "text": message.content})
    return blocks


def text_only(request: CompletionRequest, backend: str) -> CompletionRequest:
    """``request`` with every image replaced by its text stand-in, for a backend
    that cannot see; :class:`RequestRejected` when an image has none."""
    if not any(m.images for m in request.messages):
        return request
    messages = []
    for message in request.messages:
        if not message.images:
            messages.append(message)
            continue
        missing = [img.name or img.media_type for img in message.images if not img.text.strip()]
        if missing:
            raise RequestRejected(
                f"The {backend} backend cannot see images, and this request holds an image with no text stand-in "
                f"({', '.join(missing)}). Use a backend that accepts images ({', '.join(VISION_BACKENDS)}; "
                "with qwen or minimax, a vision model), or give the env a text input (DocVQA: env.options.input: ocr)."
            )
        stand_ins = [f"[Image {img.name or n} as text, since this model cannot see images]\n{img.text.strip()}"
                     for n, img in enumerate(message.images, start=1)]
        messages.append(Message(message.role, "\n\n".join([message.content, *stand_ins])))
    return replace(request, messages=tuple(messages))
