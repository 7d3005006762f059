"""gpt-oss (Harmony) inside LMDeploy: lmparse's ``gpt-oss`` response parser as ``lmparse-gpt-oss``.

LMDeploy parses gpt-oss with a response parser of its own (``gpt-oss``), which ``set_parsers``
picks by architecture (``GptOssForCausalLM``) and no CLI flag can change; it validates the
``--tool-call-parser`` / ``--reasoning-parser`` names and then ignores them. So the choice rides
on those names: ``lmparse-gpt-oss`` is registered as a tool and a reasoning name (markers, as in
``_parsers``), LMDeploy's ``gpt-oss`` is re-registered as a subclass that stays LMDeploy's own
unless one of the names is ``lmparse-gpt-oss``, and the lmparse-aware ``default`` routes that
name here too (a gpt-oss fine-tune under another architecture). ``lmparse-gpt-oss`` is also a
response-parser name, for code that configures LMDeploy's server context itself.

The request is prepared by LMDeploy's own class (the template's full tool wrappers, its Harmony
structural tag for the tools); only the reply is lmparse's, read from the engine's token ids.
"""

from __future__ import annotations

from typing import Any, ClassVar

from lmdeploy.serve.parsers._openai_harmony import GptOssResponseParser as LmdeployGptOss
from lmdeploy.serve.parsers.reasoning_parser import ReasoningParserManager
from lmdeploy.serve.parsers.response_parser import ResponseParserManager
from lmdeploy.serve.parsers.tool_parser import ToolParserManager

import lmparse

from ._parsers import HARMONY, PREFIX, LmparseParsing, LmparseReasoningParser, LmparseToolParser, request_seen

__all__ = ["GptOssResponseParser", "LmparseGptOssResponseParser", "register"]

NAME = PREFIX + HARMONY


class HarmonyToolName(LmparseToolParser):
    lmparse_name = HARMONY
    open_tag = "<|channel|>commentary"


class HarmonyReasoningName(LmparseReasoningParser):
    lmparse_name = HARMONY
    open_tag = "<|channel|>analysis<|message|>"
    close_tag = "<|end|>"


class LmparseGptOssResponseParser(LmparseParsing, LmdeployGptOss):  # type: ignore[misc]  # LMDeploy is untyped
    """One gpt-oss request: LMDeploy prepares it, lmparse's Harmony parser reads the reply."""

    def __init__(self, request: Any) -> None:
        super().__init__(request)
        self._parser = lmparse.create_parser(response_parser=HARMONY, request=request_seen(request))
        self.reasoning_tokens = None


class GptOssResponseParser(LmdeployGptOss):  # type: ignore[misc]
    """LMDeploy's ``gpt-oss`` parser, unless a configured name is ``lmparse-gpt-oss``."""

    use_lmparse: ClassVar[bool] = False

    @classmethod
    def set_parsers(cls, reasoning_parser_name: str | None = None, tool_parser_name: str | None = None,
                    tokenizer: Any = None) -> None:
        super().set_parsers(reasoning_parser_name=reasoning_parser_name, tool_parser_name=tool_parser_name,
                            tokenizer=tokenizer)
        cls.use_lmparse = NAME in (reasoning_parser_name, tool_parser_name)

    def __new__(cls, request: Any) -> Any:
        if cls.use_lmparse:
            return LmparseGptOssResponseParser(request)
        return super().__new__(cls)


def register() -> None:
    """Register ``lmparse-gpt-oss`` (tool, reasoning and response name) and the switching
    ``gpt-oss``; safe to call again."""
    ToolParserManager.register_module(name=NAME, module=HarmonyToolName, force=True)
    ReasoningParserManager.register_module(name=NAME, module=HarmonyReasoningName, force=True)
    ResponseParserManager.register_module(name=NAME, module=LmparseGptOssResponseParser, force=True)
    ResponseParserManager.register_module(name=HARMONY, module=GptOssResponseParser, force=True)
