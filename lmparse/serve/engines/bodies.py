"""The request body each upstream engine is sent: pure functions of the request and the prompt.

Every engine is asked for the raw continuation with special tokens kept and token ids
returned (llama.cpp renders a control token's text only when the request lists it in
``preserved_tokens``: the family's markers are listed).  Then, in this order, each
builder writes the token limit, the stop strings and the model name (``_common_fields``);
the client's sampling options under the engine's own names (``_sampling``, ``_SAMPLING``);
logprobs and the reply format; the client's engine-specific extras that are on the
engine's allow-list (``EXTRA_FIELDS``; they never replace a field lmparse wrote); and last
the request's structured-generation constraint (``constrain``), which overrides.
A field an engine has no name for is not sent, and logged once.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, NamedTuple

import orjson

from ..errors import RequestError
from .base import GenerationRequest

__all__ = ["BodyOptions", "EXTRA_FIELDS", "vllm_body", "sglang_body", "lmdeploy_body", "llamacpp_body",
           "constrain"]

logger = logging.getLogger("lmparse.serve")

Body = dict[str, Any]


class BodyOptions(NamedTuple):
    """What a body takes from the engine's configuration."""

    model: str | None  # sent as ``model`` when set
    default_max_tokens: int  # sent when the request names no limit
    preserved_tokens: tuple[str, ...] = ()  # llama.cpp: the family's markers, whose text must be rendered
    token_text: Callable[[int], str | None] | None = None  # a token id's text (llama.cpp stop_token_ids)


# The engine-specific fields a client may send at the top level (the OpenAI SDK's
# ``extra_body``), per engine: passed through as sent (the engine checks them), others
# ignored.  SGLang's go into ``sampling_params``.  docs/engines.md lists them.
EXTRA_FIELDS: dict[str, tuple[str, ...]] = {
    "vllm": ("min_tokens", "ignore_eos", "bad_words", "allowed_token_ids", "structured_outputs", "guided_json",
             "guided_regex", "guided_choice", "guided_grammar", "guided_whitespace_pattern", "priority",
             "cache_salt", "truncate_prompt_tokens", "length_penalty", "vllm_xargs"),
    "sglang": ("min_new_tokens", "ignore_eos", "regex", "ebnf", "structural_tag", "stop_regex", "custom_params"),
    "lmdeploy": ("ignore_eos",),
    "llamacpp": ("grammar", "grammar_lazy", "grammar_triggers", "n_probs", "mirostat", "mirostat_tau",
                 "mirostat_eta", "typical_p", "dynatemp_range", "dynatemp_exponent", "xtc_probability",
                 "xtc_threshold", "repeat_last_n", "dry_multiplier", "dry_base", "dry_allowed_length",
                 "dry_penalty_last_n", "dry_sequence_breakers", "top_n_sigma", "min_keep", "n_keep",
                 "ignore_eos", "samplers", "id_slot", "t_max_predict_ms", "n_indent"),
}

# Each engine's names for the scalar sampling options (a field missing: the engine has
# none, and it is not sent), and the top_k that means "no top-k cut".
_SCALARS = ("temperature", "top_p", "top_k", "min_p", "seed", "presence_penalty", "frequency_penalty",
            "repetition_penalty")
_SAME = {name: name for name in _SCALARS}
_SAMPLING: dict[str, tuple[dict[str, str], int]] = {
    "vllm": (_SAME, -1),
    "sglang": ({**_SAME, "seed": "sampling_seed"}, -1),
    # LMDeploy's /generate (GenerateReqInput) has no seed and no additive penalties.
    "lmdeploy": ({name: name for name in ("temperature", "top_p", "top_k", "min_p", "repetition_penalty")}, 0),
    "llamacpp": ({**_SAME, "repetition_penalty": "repeat_penalty"}, 0),
}


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
        params["stop"] = list(request.stop)
    if options.model:
        body["model"] = options.model
    return body


def _sampling(params: Body, request: GenerationRequest, engine: str) -> None:
    """The scalar sampling options under the engine's names, the logit bias and the stop ids
    where the engine takes them as given (llama.cpp's own shapes are its builder's)."""
    names, no_top_k = _SAMPLING[engine]
    sampling = request.sampling
    for field in _SCALARS:
        value = getattr(sampling, field)
        if value is None:
            continue
        if field not in names:
            _warn_once(f"{engine} takes no {field}: it is not forwarded")
            continue
        params[names[field]] = no_top_k if field == "top_k" and value <= 0 else value
    if engine == "llamacpp":
        return
    if sampling.logit_bias:
        if engine == "lmdeploy":
            _warn_once("lmdeploy's /generate takes no logit_bias: it is not forwarded")
        else:
            params["logit_bias"] = {str(token): bias for token, bias in sampling.logit_bias.items()}
    if sampling.stop_token_ids:
        params["stop_token_ids"] = list(sampling.stop_token_ids)


def _extras(params: Body, request: GenerationRequest, engine: str) -> None:
    """The client's allow-listed extras, below anything lmparse wrote itself."""
    for field in EXTRA_FIELDS[engine]:
        if field in request.extra:
            params.setdefault(field, request.extra[field])


def constrain(body: Body, request: GenerationRequest, engine: str) -> Body:
    """``request.constraint`` (``lmparse.constrain.constraint_for``) where the engine reads
    it, over any reply format: ``{"structural_tag": JSON}`` (an XGrammar structural tag, as
    text) as vLLM's ``structured_outputs.structural_tag`` or SGLang's
    ``sampling_params.structural_tag``; ``{"grammar": GBNF}`` as llama.cpp's ``grammar``.
    An engine that cannot take it is a 400: a constraint is never silently dropped."""
    constraint = request.constraint
    if constraint is None:
        return body
    if "structural_tag" in constraint and engine in ("vllm", "sglang"):
        if engine == "vllm":
            body["structured_outputs"] = {"structural_tag": constraint["structural_tag"]}
        else:
            body["sampling_params"].pop("json_schema", None)
            body["sampling_params"]["structural_tag"] = constraint["structural_tag"]
        return body
    if "grammar" in constraint and engine == "llamacpp":
        body.pop("json_schema", None)
        body.update(constraint)
        return body
    kind = next(iter(constraint), "?")
    raise RequestError(f"tool_choice cannot be enforced on {engine}: it takes no {kind} constraint", "tool_choice")


def vllm_body(request: GenerationRequest, prompt: str, options: BodyOptions) -> Body:
    body: Body = {"prompt": prompt, "stream": True, "return_token_ids": True, "skip_special_tokens": False,
                  "spaces_between_special_tokens": False, "add_special_tokens": False,  # the template wrote BOS
                  "stream_options": {"include_usage": True}}
    _common_fields(body, request, options, "max_tokens")
    _sampling(body, request, "vllm")
    if request.logprobs:
        body["logprobs"] = request.top_logprobs
    schema = _json_schema(request)
    if schema is not None:
        body["structured_outputs"] = {"json": schema} if schema else {"json_object": True}
    _extras(body, request, "vllm")
    return constrain(body, request, "vllm")


def sglang_body(request: GenerationRequest, prompt: str, options: BodyOptions) -> Body:
    params: Body = {"skip_special_tokens": False, "spaces_between_special_tokens": False, "no_stop_trim": True}
    body: Body = {"text": prompt, "sampling_params": params, "stream": True}
    _common_fields(body, request, options, "max_new_tokens", params)
    _sampling(params, request, "sglang")
    if request.logprobs:
        body.update(return_logprob=True, top_logprobs_num=request.top_logprobs, return_text_in_logprobs=True)
    schema = _json_schema(request)
    if schema is not None:
        params["json_schema"] = orjson.dumps(schema or {"type": "object"}).decode()
    _extras(params, request, "sglang")
    return constrain(body, request, "sglang")


def lmdeploy_body(request: GenerationRequest, prompt: str, options: BodyOptions) -> Body:
    body: Body = {"prompt": prompt, "stream": True, "skip_special_tokens": False,
                  "spaces_between_special_tokens": False}
    _common_fields(body, request, options, "max_tokens")
    _sampling(body, request, "lmdeploy")
    if request.logprobs:
        body["return_logprob"] = True
    if request.response_format is not None:
        _warn_once("lmdeploy's /generate takes no JSON schema: the reply format is asked for, not enforced")
    _extras(body, request, "lmdeploy")
    return constrain(body, request, "lmdeploy")


def llamacpp_body(request: GenerationRequest, prompt: str, options: BodyOptions) -> Body:
    body: Body = {"prompt": prompt, "stream": True, "return_tokens": True, "cache_prompt": True}
    _common_fields(body, request, options, "n_predict")
    _sampling(body, request, "llamacpp")
    sampling = request.sampling
    if sampling.logit_bias:
        body["logit_bias"] = [[token, bias] for token, bias in sampling.logit_bias.items()]
    preserved = list(options.preserved_tokens)
    stop_texts = _stop_token_texts(sampling.stop_token_ids, options)
    if stop_texts:  # stop on a token by its text, which must then be rendered
        body["stop"] = body.get("stop", []) + [t for t in stop_texts if t not in body.get("stop", [])]
        preserved += [t for t in stop_texts if t not in preserved]
    if preserved:
        body["preserved_tokens"] = preserved
    if request.logprobs:
        body["n_probs"] = max(request.top_logprobs, 1)
    schema = _json_schema(request)
    if schema is not None:
        body["json_schema"] = schema or {"type": "object"}
    _extras(body, request, "llamacpp")
    return constrain(body, request, "llamacpp")


def _stop_token_texts(token_ids: list[int], options: BodyOptions) -> list[str]:
    """llama.cpp has no stop_token_ids: the tokens' texts, as stop strings."""
    texts = []
    for token_id in token_ids:
        text = options.token_text(token_id) if options.token_text is not None else None
        if text:
            texts.append(text)
        else:
            _warn_once(f"llamacpp takes no stop_token_ids and token {token_id} has no known text: not forwarded")
    return texts
