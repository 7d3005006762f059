"""Family presets: what ``lmparse serve --family NAME`` binds, one per declared family.

Each preset is read off the family's declaration (``lmparse.families``): its parsers'
registry names, tokenizer, chat template and end-of-turn texts.  Explicit
``--tool-call-parser`` / ``--reasoning-parser`` / ``--response-parser`` override them
(``with_parsers``).  A preset whose parser is not registered is refused at startup with the
missing name, never half-served.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from .. import families as core
from ..factory import template_mode
from ..registry import ReasoningParserManager, ResponseParserManager, ToolParserManager

__all__ = ["Family", "FAMILIES", "DEFAULT_FAMILY", "GET_DATA", "get_family", "missing_parsers", "missing_data",
           "needs_model_template"]


@dataclass(frozen=True)
class Family:
    name: str
    tool_parser: str | None
    reasoning_parser: str | None
    response_parser: str = "default"
    tokenizer: str | None = None  # directory name in the tokenizer test data (None: pseudo-tokenizer)
    template: str | None = None  # file name under templates/ (or the tokenizer dir's own template)
    description: str = ""
    end_of_turn: tuple[str, ...] = ()  # texts that end the model's turn

    @classmethod
    def of(cls, family: core.Family) -> Family:
        return cls(family.name, family.tool_parser, family.reasoning_parser, family.response_parser,
                   family.tokenizer, family.template, family.description, family.end_of_turn)

    def with_parsers(self, tool: str | None = None, reasoning: str | None = None,
                     response: str | None = None) -> Family:
        """This family with explicitly chosen parsers (``""`` turns one off)."""
        return replace(
            self,
            tool_parser=self.tool_parser if tool is None else (tool or None),
            reasoning_parser=self.reasoning_parser if reasoning is None else (reasoning or None),
            response_parser=self.response_parser if response is None else (response or "default"),
        )


FAMILIES: dict[str, Family] = {f.name: Family.of(f) for f in core.FAMILIES}
DEFAULT_FAMILY = core.DEFAULT


def get_family(name: str) -> Family:
    """The preset of the family called ``name``; ``ValueError`` listing the known ones otherwise."""
    return FAMILIES[core.get_family(name).name]


def missing_parsers(family: Family) -> list[str]:
    """The parser names a family needs that no module has registered (yet)."""
    missing = []
    if family.tool_parser and family.tool_parser not in ToolParserManager:
        missing.append(f"tool parser {family.tool_parser!r}")
    if family.reasoning_parser and family.reasoning_parser not in ReasoningParserManager:
        missing.append(f"reasoning parser {family.reasoning_parser!r}")
    if family.response_parser not in ResponseParserManager:
        missing.append(f"response parser {family.response_parser!r}")
    return missing


def needs_model_template(family: Family) -> bool:
    """Whether the family's parser is built from the served model's own ``response_template``
    (``response-template``, ``beam``): it is served only with ``--model DIR``, never simulated."""
    return template_mode(family.response_parser) is not None


# A tokenizer directory of the test data holds one of these (gpt-oss: openai-harmony's encoding);
# lmparse.serve.tokenizer.load_tokenizer reads nothing else.
_TOKENIZER_FILES = ("tokenizer.json.gz", "o200k_base.tiktoken")
GET_DATA = "run `make testdata` (scripts/fetch_testdata.py) or set LMPARSE_TESTDATA to a directory that holds it"


def missing_data(family: Family, root: Path | None) -> list[str]:
    """What of the family's own chat template and tokenizer the tokenizer test data (``root``;
    None: there is none) lacks, each as its path inside it and what it is.  Without the
    template the simulated engine renders prompts as ChatML, without the tokenizer it streams
    pseudo-tokens.  A family that declares neither uses those by design and lacks nothing."""
    if needs_model_template(family):  # served from --model DIR only: the test data is not used
        return []
    missing = []
    if family.template and (root is None or not (root / "templates" / family.template).is_file()):
        missing.append(f"templates/{family.template} (chat template)")
    if family.tokenizer and (root is None or not any((root / family.tokenizer / name).is_file()
                                                     for name in _TOKENIZER_FILES)):
        missing.append(f"{family.tokenizer}/ (tokenizer: {' or '.join(_TOKENIZER_FILES)})")
    return missing
