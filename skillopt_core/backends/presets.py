"""Named presets over the OpenAI-compatible backend: ``qwen`` (Qwen served by a
local vLLM server) and ``minimax`` (MiniMax's OpenAI-compatible API).

A preset is the ``openai`` backend with its own defaults: the server's base
URL, the variable holding the key and the model. Each reads its own variables
(listed in ``.env.example``) and, like ``anthropic``, ignores ``model.base_url``,
which is shared by every role and usually names another server:

================  =====================================  =================  ================
preset            base URL (variable, default)           key variable       model
================  =====================================  =================  ================
``qwen``          ``QWEN_BASE_URL``,                     ``QWEN_API_KEY``   ``model.<role>``, else
                  ``http://127.0.0.1:8000/v1`` (vLLM's   (optional: vLLM's  ``QWEN_MODEL``, else the
                  default port)                          ``--api-key``)     first model the server lists
``minimax``       ``MINIMAX_BASE_URL``, else by          ``MINIMAX_API_KEY``  ``model.<role>``, else
                  ``MINIMAX_REGION``: ``global`` →       (required)         ``MINIMAX_MODEL``, else
                  ``https://api.minimax.io/v1``,                            ``MiniMax-M3``
                  ``cn`` → ``https://api.minimaxi.com/v1``
================  =====================================  =================  ================

``model.api_key_env`` still names another key variable. Everything else
(retries, the JSON ladder, refused parameters) is the openai backend's.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from skillopt_core.backends import register_backend
from skillopt_core.backends.base import BackendConfigError
from skillopt_core.backends.keys import lookup
from skillopt_core.backends.openai_backend import OpenAIBackend, build_compatible_backend

__all__ = ["MINIMAX_REGIONS", "PRESETS", "Preset", "build_preset_backend"]

# MiniMax serves one API under a hostname per region.
MINIMAX_REGIONS = {"global": "https://api.minimax.io/v1", "cn": "https://api.minimaxi.com/v1"}


@dataclass(frozen=True)
class Preset:
    name: str
    base_url_var: str
    key_var: str
    key_required: bool
    model_var: str
    default_model: str | None  # None: ask the server (GET /models)
    default_base_url: Callable[[], str]
    max_completion_tokens: bool


def _minimax_base_url() -> str:
    region = (lookup("MINIMAX_REGION") or "global").strip().lower().replace("-", "_")
    region = {"global_en": "global", "cn_zh": "cn", "china": "cn"}.get(region, region)
    if region not in MINIMAX_REGIONS:
        raise BackendConfigError(
            f"minimax: MINIMAX_REGION={region!r} is not a known region; use one of "
            f"{', '.join(sorted(MINIMAX_REGIONS))}, or set MINIMAX_BASE_URL."
        )
    return MINIMAX_REGIONS[region]


PRESETS = {
    "qwen": Preset("qwen", "QWEN_BASE_URL", "QWEN_API_KEY", False, "QWEN_MODEL", None,
                   lambda: "http://127.0.0.1:8000/v1", max_completion_tokens=False),
    # MiniMax documents max_tokens as deprecated in favour of max_completion_tokens.
    "minimax": Preset("minimax", "MINIMAX_BASE_URL", "MINIMAX_API_KEY", True, "MINIMAX_MODEL", "MiniMax-M3",
                      _minimax_base_url, max_completion_tokens=True),
}


def build_preset_backend(preset: Preset, spec: Any, **seams: Any) -> OpenAIBackend:
    """The preset's backend for ``spec``; ``seams`` (``http_client_factory``,
    ``policy``) go to :func:`.openai_backend.build_compatible_backend`."""
    base_url = lookup(preset.base_url_var) or preset.default_base_url()
    model = spec.model or lookup(preset.model_var) or preset.default_model
    spec_with_model = type(spec)(name=spec.name, model=model, role=spec.role, options=spec.options)
    return build_compatible_backend(
        spec_with_model, name=preset.name, base_url=base_url,
        key_var=spec.options.get("api_key_env") or preset.key_var, key_required=preset.key_required,
        default_model=None, max_completion_tokens=preset.max_completion_tokens, **seams,
    )


for _name, _preset in PRESETS.items():
    register_backend(_name)(functools.partial(build_preset_backend, _preset))
