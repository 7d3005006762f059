"""Model bindings: a family's parsers, the engine that generates for it, the names it answers to.

``simulated_binding`` serves a family with the simulated model (its real tokenizer and
chat template when the tokenizer test data is at hand: it has no model of its own);
``upstream_binding`` puts a real engine (vLLM, SGLang, LMDeploy, llama.cpp) behind it,
with the model's own template and tokenizer (``--model DIR``), a template file
(``--chat-template``) or the engine's own rendering (``--template-from-engine``), never
the test data.  ``names`` are the model names requests may use: exact names and glob
patterns (``claude-*``); the family's name by default.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path
from typing import Any
from collections.abc import Sequence

from ..factory import create_parser, template_mode
from ..tools.autoselect import select_tool_parser
from ..request import ParserRequest
from ..response.base import ResponseParser
from ..response.template import ResponseTemplate
from .engines.base import Engine
from .engines.simulated import SimulatedEngine
from .engines.special import family_markers as _family_markers
from .families import GET_DATA, Family, missing_data, missing_parsers, needs_model_template
from .model_dir import ModelFiles, load_model_dir
from .models import is_pattern
from .openai import REASONING_FIELDS
from .templates import ChatTemplate, load_template
from .tokenizer import PseudoTokenizer, Tokenizer, load_tokenizer, testdata_dir

__all__ = ["ModelBinding", "simulated_binding", "upstream_binding"]

logger = logging.getLogger("lmparse.serve")


class ModelBinding:
    """One served model: a family's parsers, its engine, and the names it answers to."""

    def __init__(self, names: str | Sequence[str], family: Family, engine: Engine,
                 reasoning_field: str = "reasoning_content", response_template: ResponseTemplate | None = None) -> None:
        if reasoning_field not in REASONING_FIELDS:
            raise ValueError(f"reasoning field must be one of {', '.join(REASONING_FIELDS)}")
        _require_parsers(family)
        self.names = [names] if isinstance(names, str) else list(names) or [family.name]
        # The id it is listed under: its first exact name, or the family's.
        self.name = next((n for n in self.names if not is_pattern(n)), family.name)
        if self.name not in self.names:
            self.names.insert(0, self.name)
        self.family = family
        self.engine = engine
        self.reasoning_field = reasoning_field
        self.response_template = response_template  # the model's own, when it is what parses
        # The model's end-of-turn tokens (generation_config.json), when its directory was given.
        self.stop_token_ids: tuple[int, ...] = ()
        # Its added tokens (tokenizer_config.json), when its directory was given: parsers
        # that read markers off the vocabulary (Hunyuan's tag suffix) get them.
        self.vocabulary: object = None
        # One parser now, so what parsers load once per process (Harmony's encoding: 0.2 s
        # with the GIL held) loads at startup, not under the first request.
        self.new_parser(ParserRequest.accept_all())

    def new_parser(self, request: ParserRequest, prompt: str | None = None) -> ResponseParser:
        """A parser for one reply; ``prompt`` (its rendered prompt's tail) settles an ``auto`` initial mode."""
        f = self.family
        if self.response_template is not None:
            return create_parser(response_template=self.response_template, response_parser=f.response_parser,
                                 request=request, prompt=prompt)
        return create_parser(tool_parser=f.tool_parser, reasoning_parser=f.reasoning_parser,
                             response_parser=f.response_parser, request=request, prompt=prompt,
                             tokenizer=self.vocabulary)


def resolve_auto(family: Family, template: Any) -> Family:
    """``--tool-call-parser auto``: the dialect the served chat template writes, or a startup error
    listing the candidates (``lmparse.tools.autoselect``)."""
    if family.tool_parser != "auto":
        return family
    source = getattr(template, "source", None)
    if not source:
        raise ValueError(f"--tool-call-parser auto needs the model's chat template; {family.name} has none here "
                         "(pass --chat-template FILE or --model DIR, or name the parser)")
    chosen = select_tool_parser(source)
    logger.info("tool parser auto: the chat template %s writes %s", getattr(template, "name", "?"), chosen)
    return replace(family, tool_parser=chosen)


def _require_parsers(family: Family) -> None:
    """Refuse a family with unregistered parsers."""
    missing = missing_parsers(family)
    if missing:
        raise ValueError(f"family {family.name} needs {' and '.join(missing)}, which is not registered")


def simulated_binding(family: Family, token_rate: float = 0.0, reasoning_field: str = "reasoning_content",
                      names: Sequence[str] | None = None) -> ModelBinding:
    """A family served by the simulated engine, with its real tokenizer and template when present."""
    if needs_model_template(family):
        raise ValueError(f"family {family.name} parses with the model's own response_template: serve it from a "
                         "real engine with --model DIR (the simulated engine has no checkpoint)")
    root = testdata_dir()
    missing = missing_data(family, root)
    if missing:
        instead = [what for what, part in (("ChatML prompts", "(chat template)"), ("pseudo-tokens", "(tokenizer"))
                   if any(part in m for m in missing)]
        logger.warning("family %s: %s not in the tokenizer test data (%s): serving with %s instead; %s",
                       family.name, ", ".join(missing), root or "none found", " and ".join(instead), GET_DATA)
    template = load_template(root, family.template, family.tokenizer)
    family = resolve_auto(family, template)
    _require_parsers(family)
    tokenizer = load_tokenizer(family.tokenizer, family.name, _family_markers(family))
    engine = SimulatedEngine(family, tokenizer, template, token_rate)
    binding = ModelBinding(names or [family.name], family, engine, reasoning_field)
    logger.info("model %s: simulated %s, tokenizer %s, template %s", ", ".join(binding.names), family.name,
                tokenizer.name, template.name if template else "ChatML fallback")
    return binding


def upstream_binding(family: Family, engine: str, url: str, model: str | None = None,
                     reasoning_field: str = "reasoning_content", names: Sequence[str] | None = None,
                     chat_template: str | None = None, max_tokens: int | None = None,
                     transport: Any = None, model_dir: str | Path | None = None,
                     template_from_engine: bool = False, dialect_named: bool = True) -> ModelBinding:
    """A family served by a real engine at ``url`` (vllm, sglang, lmdeploy, llamacpp).  The
    prompt is rendered with ``chat_template`` (a jinja file) if given, else by the engine
    (``template_from_engine``, llama.cpp), else with the template of ``model_dir`` (a Hugging
    Face model directory, whose tokenizer also counts); without any, a ``ValueError`` names
    the flags to pass.  When no dialect was named (``dialect_named`` False) and the model
    directory ships a ``response_template``, that template parses the replies."""
    from .engines.upstream import DEFAULT_MAX_TOKENS, UpstreamEngine

    files = load_model_dir(model_dir) if model_dir is not None else None
    # --response-parser response-template, --family beam: the model's own template, in that mode
    mode = template_mode(family.response_parser)
    asked = mode is not None
    response_template = _model_response_template(files, asked, mode or "hf") if asked or not dialect_named else None
    if response_template is not None:
        family = replace(family, tool_parser=None, reasoning_parser=None,
                         response_parser=family.response_parser if asked else "response-template")
    template: ChatTemplate | None
    tokenizer: Tokenizer
    template = _upstream_template(engine, url, files, chat_template, template_from_engine)
    family = resolve_auto(family, template)
    _require_parsers(family)
    # No model files: counts are estimates until the engine reports its own.
    tokenizer = files.tokenizer if files is not None else PseudoTokenizer(f"pseudo:{family.name}",
                                                                         _family_markers(family))
    upstream = UpstreamEngine(engine, url, family, tokenizer, template, model, max_tokens or DEFAULT_MAX_TOKENS,
                              transport=transport)
    binding = ModelBinding(names or [family.name], family, upstream, reasoning_field, response_template)
    if files is not None:
        binding.stop_token_ids = files.stop_token_ids
        binding.vocabulary = files.vocabulary
    logger.info("model %s: %s at %s (%s), template %s, tokenizer %s%s", ", ".join(binding.names), engine, url,
                family.name, template.name if template else "ChatML fallback", tokenizer.name,
                f", end-of-turn tokens {list(files.stop_token_ids)}" if files and files.stop_token_ids else "")
    return binding


def _model_response_template(files: ModelFiles | None, asked: bool, mode: str = "hf") -> ResponseTemplate | None:
    """The model directory's own response_template, compiled in ``mode`` (a startup error if
    lmparse cannot serve it, or if it was asked for and there is none)."""
    if files is None or files.response_template is None:
        if asked:
            name = "beam" if mode == "beam" else "response-template"
            raise ValueError(f"the {name} response parser needs --model DIR whose tokenizer_config.json "
                             "has a response_template")
        return None
    try:
        compiled = ResponseTemplate(files.response_template, mode)
    except ValueError as exc:
        raise ValueError(f"--model {files.path}: its response_template cannot be served ({exc}); "
                         "name the dialect with --family or --tool-call-parser") from None
    logger.info("--model %s ships a response_template%s: replies are parsed by the response-template parser "
                "(fields %s)", files.path, "" if asked else " and no dialect was named",
                ", ".join(compiled.spec.fields))
    return compiled


def _upstream_template(engine: str, url: str, files: ModelFiles | None, chat_template: str | None,
                       template_from_engine: bool) -> ChatTemplate:
    """The template a real engine's prompts are rendered with (see ``upstream_binding``)."""
    if chat_template and template_from_engine:
        raise ValueError("--chat-template and --template-from-engine exclude each other: pass one")
    if chat_template:
        path = Path(chat_template)
        return ChatTemplate(path.read_text(encoding="utf-8"), path.name, files.bos if files else "",
                            files.eos if files else "")
    if template_from_engine:
        if engine != "llamacpp":
            raise ValueError(f"--template-from-engine needs --engine llamacpp (llama-server's POST /apply-template); "
                             f"for --engine {engine} pass --model DIR or --chat-template FILE")
        from .engine_template import EngineTemplate

        return EngineTemplate(url)
    if files is not None:
        if files.template is None:
            raise ValueError(f"--model {files.path} has no chat template (no chat_template.jinja, no chat_template "
                             f"in tokenizer_config.json): pass --chat-template FILE")
        return files.template
    engine_option = ", or --template-from-engine (the engine renders)" if engine == "llamacpp" else ""
    raise ValueError(f"--engine {engine} needs the model's chat template: pass --model DIR (its Hugging Face model "
                     f"directory: tokenizer.json, tokenizer_config.json), --chat-template FILE{engine_option}")
