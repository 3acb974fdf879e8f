"""The ``azure-openai`` backend: Azure OpenAI through the SDK's ``AsyncAzureOpenAI``.

Contract:

- Options: ``endpoint`` (or ``AZURE_OPENAI_ENDPOINT``), ``deployment`` (or the
  model name for the role; the deployment is what Azure routes by, and it is
  this backend's ``model``), ``api_version`` (or ``OPENAI_API_VERSION``,
  default :data:`DEFAULT_API_VERSION`), ``api_key_env`` (default
  ``AZURE_OPENAI_API_KEY``), ``timeout``, ``max_retries``.
- Authentication: the API key when the variable is set; otherwise a Microsoft
  Entra ID token from ``azure-identity``'s ``DefaultAzureCredential`` (scope
  ``https://cognitiveservices.azure.com/.default``) when that package is
  installed; otherwise a :class:`BackendConfigError` naming both ways.
- Everything else (JSON output ladder, retries, usage) is the openai backend's.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from skillopt_core.backends import register_backend
from skillopt_core.backends.base import BackendConfigError
from skillopt_core.backends.keys import lookup, safe_url
from skillopt_core.backends.openai_backend import OpenAIBackend
from skillopt_core.backends.retry import RetryPolicy, policy_from_options, timeout_option

DEFAULT_API_VERSION = "2024-10-21"
DEFAULT_KEY_VAR = "AZURE_OPENAI_API_KEY"
ENTRA_SCOPE = "https://cognitiveservices.azure.com/.default"


def entra_token_provider() -> Callable[[], Any] | None:
    """An async bearer-token provider from azure-identity, or None if it is not installed."""
    try:
        identity = importlib.import_module("azure.identity.aio")
    except ImportError:
        return None
    credential = identity.DefaultAzureCredential()
    return identity.get_bearer_token_provider(credential, ENTRA_SCOPE)


def build_azure_backend(
    spec: Any,
    *,
    http_client_factory: Callable[[], Any] | None = None,
    policy: RetryPolicy | None = None,
) -> OpenAIBackend:
    """An azure-openai :class:`OpenAIBackend`; the keyword arguments are test seams."""
    from openai import AsyncAzureOpenAI

    options = spec.options
    endpoint = options.get("endpoint") or lookup("AZURE_OPENAI_ENDPOINT")
    if not endpoint:
        raise BackendConfigError(
            "azure-openai backend: no endpoint. Set model.endpoint "
            "(https://<resource>.openai.azure.com) or the variable AZURE_OPENAI_ENDPOINT."
        )
    deployment = options.get("deployment") or spec.model
    if not deployment:
        raise BackendConfigError(
            "azure-openai backend: no deployment. Set model.deployment to the name of your "
            "Azure OpenAI deployment (or set the model name for this role)."
        )
    api_version = options.get("api_version") or lookup("OPENAI_API_VERSION") or DEFAULT_API_VERSION
    key_var = options.get("api_key_env") or DEFAULT_KEY_VAR
    api_key = lookup(key_var)
    auth: dict[str, Any]
    if api_key:
        auth = {"api_key": api_key}
    else:
        provider = entra_token_provider()
        if provider is None:
            raise BackendConfigError(
                f"azure-openai backend: no credentials. Set the variable {key_var} to the resource "
                "key (see .env.example), or install azure-identity (pip install azure-identity) "
                "and sign in (az login) to use a Microsoft Entra ID token."
            )
        auth = {"azure_ad_token_provider": provider}
    timeout = timeout_option(options)

    def make_client() -> Any:
        extra = {"http_client": http_client_factory()} if http_client_factory else {}
        return AsyncAzureOpenAI(
            azure_endpoint=endpoint,
            azure_deployment=deployment,
            api_version=api_version,
            timeout=timeout,
            max_retries=0,
            **auth,
            **extra,
        )

    return OpenAIBackend(
        name="azure-openai",
        model=deployment,
        client_factory=make_client,
        policy=policy or policy_from_options(options),
        key_var=key_var if api_key else None,
        where=f"{safe_url(endpoint)} api-version {api_version}",
        official=True,
    )


register_backend("azure-openai")(build_azure_backend)
