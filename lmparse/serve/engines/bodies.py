"""The request body each upstream engine is sent: pure functions of the request and the prompt.

Every engine is asked for the raw continuation with special tokens kept and token ids
returned; the token limit, the stop strings and the model name are filled in one place
(``_common_fields``), each engine's own fields by its builder.
"""

from __future__ import annotations

import logging
from typing import Any, NamedTuple

import orjson

from .base import GenerationRequest

__all__ = ["BodyOptions", "vllm_body", "sglang_body", "lmdeploy_body", "llamacpp_body"]

logger = logging.getLogger("lmparse.serve")

Body = dict[str, Any]


class BodyOptions(NamedTuple):
    """What a body takes from the engine's configuration."""

    model: str | None  # sent as ``model`` when set
    default_max_tokens: int  # sent when the request names no limit


def _json_schema(request: GenerationRequest) -> dict[str, Any] | None:
    """The JSON schema a reply must follow (``{}``: any JSON object), or None."""
    fmt = request.response_format
    if fmt is None:
        return None
    schema = fmt.get("schema") if fmt.get("type") == "json_schema" else None
    return schema if isinstance(schema, dict) else {}


_warned: set[str] = set()


def _warn_once(message: str) -> None:
    if message not in _warned:
        _warned.add(message)
        logger.warning(message)


def _common_fields(body: Body, request: GenerationRequest, options: BodyOptions, limit: str,
                   sampling: Body | None = None) -> Body:
    """The token limit (named ``limit``) and stop strings, in ``sampling`` when the engine
    nests its sampling parameters, and the model name."""
    params = body if sampling is None else sampling
    params[limit] = request.max_tokens or options.default_max_tokens
    if request.stop:
        params["stop"] = request.stop
    if options.model:
        body["model"] = options.model
    return body


def vllm_body(request: GenerationRequest, prompt: str, options: BodyOptions) -> Body:
    body: Body = {"prompt": prompt, "stream": True, "return_token_ids": True, "skip_special_tokens": False,
                  "spaces_between_special_tokens": False, "add_special_tokens": False,  # the template wrote BOS
                  "stream_options": {"include_usage": True}}
    if request.logprobs:
        body["logprobs"] = request.top_logprobs
    schema = _json_schema(request)
    if schema is not None:
        body["structured_outputs"] = {"json": schema} if schema else {"json_object": True}
    return _common_fields(body, request, options, "max_tokens")


def sglang_body(request: GenerationRequest, prompt: str, options: BodyOptions) -> Body:
    params: Body = {"skip_special_tokens": False, "spaces_between_special_tokens": False, "no_stop_trim": True}
    body: Body = {"text": prompt, "sampling_params": params, "stream": True}
    if request.logprobs:
        body.update(return_logprob=True, top_logprobs_num=request.top_logprobs, return_text_in_logprobs=True)
    schema = _json_schema(request)
    if schema is not None:
        params["json_schema"] = orjson.dumps(schema or {"type": "object"}).decode()
    return _common_fields(body, request, options, "max_new_tokens", params)


def lmdeploy_body(request: GenerationRequest, prompt: str, options: BodyOptions) -> Body:
    body: Body = {"prompt": prompt, "stream": True, "skip_special_tokens": False,
                  "spaces_between_special_tokens": False}
    if request.logprobs:
        body["return_logprob"] = True
    if request.response_format is not None:
        _warn_once("lmdeploy's /generate takes no JSON schema: the reply format is asked for, not enforced")
    return _common_fields(body, request, options, "max_tokens")


def llamacpp_body(request: GenerationRequest, prompt: str, options: BodyOptions) -> Body:
    body: Body = {"prompt": prompt, "stream": True, "return_tokens": True, "cache_prompt": True}
    if request.logprobs:
        body["n_probs"] = max(request.top_logprobs, 1)
    schema = _json_schema(request)
    if schema is not None:
        body["json_schema"] = schema or {"type": "object"}
    return _common_fields(body, request, options, "n_predict")
