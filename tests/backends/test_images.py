"""Images in requests: the request shapes OpenAI (chat completions ``image_url``
data URLs, https://platform.openai.com/docs/guides/images-vision) and Anthropic
(``image`` blocks with a base64 ``source``, https://docs.anthropic.com/en/docs/build-with-claude/vision)
document, checked with the HTTP mock of test_http_backends.py; and backends
that cannot see: a text stand-in, or a refusal that says so."""

from __future__ import annotations

import base64

import pytest

from skillopt_core.backends import BackendSpec, CompletionRequest, ImageAttachment, Message, create_backend
from skillopt_core.backends.base import RequestRejected
from skillopt_core.backends.images import text_only

from test_http_backends import Recorder, _isolated_env, anthropic, anthropic_reply, openai, openai_reply  # noqa: F401  (autouse: test keys, no .env)

PNG = b"\x89PNG\r\n\x1a\n-a-tiny-page"
PAGE = ImageAttachment("image/png", PNG, text="INVOICE No. 42  Total: $310.00", name="page 1")


def with_image(image: ImageAttachment = PAGE) -> CompletionRequest:
    return CompletionRequest(messages=(Message("user", "What is the total?", images=(image,)),), system="Be brief.")


async def test_openai_sends_text_then_a_base64_data_url() -> None:
    recorder = Recorder(openai_reply("$310.00"))
    await openai(recorder).complete(with_image())
    content = recorder.body()["messages"][1]["content"]
    assert content[0] == {"type": "text", "text": "What is the total?"}
    assert content[1] == {"type": "image_url",
                          "image_url": {"url": "data:image/png;base64," + base64.b64encode(PNG).decode()}}


async def test_anthropic_sends_the_image_block_before_the_text() -> None:
    recorder = Recorder(anthropic_reply("$310.00"))
    await anthropic(recorder).complete(with_image())
    content = recorder.body()["messages"][0]["content"]
    assert content[0] == {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                      "data": base64.b64encode(PNG).decode()}}
    assert content[1] == {"type": "text", "text": "What is the total?"}


async def test_text_only_messages_keep_the_plain_string_shape() -> None:
    recorder = Recorder(openai_reply("4"))
    await openai(recorder).complete(CompletionRequest.single("2+2?"))
    assert recorder.body()["messages"][0]["content"] == "2+2?"


def test_a_backend_that_cannot_see_gets_the_text_stand_in_marked_as_such() -> None:
    (message,) = text_only(with_image(), "local").messages
    assert message.images == ()
    assert "[Image page 1 as text, since this model cannot see images]\nINVOICE No. 42" in message.content


def test_without_a_stand_in_a_backend_that_cannot_see_refuses_and_names_those_that_can() -> None:
    with pytest.raises(RequestRejected, match=r"local backend cannot see images.*openai, azure-openai, anthropic"):
        text_only(with_image(ImageAttachment("image/png", PNG, name="scan")), "local")


async def test_the_scripted_backend_reads_the_stand_in() -> None:
    backend = create_backend(BackendSpec("scripted", None, "target",
                                         {"scripted": {"rules": [{"match": "Total: $310.00", "response": "310"}]}}))
    assert (await backend.complete(with_image())).text == "310"
