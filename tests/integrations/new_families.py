"""The tool families added in late 2026, for each engine's rows of the compatibility table.

Each engine's suite writes its own families' replies; these families' clean reply (reasoning where
the family has it, text, two calls) is rendered here by lmparse's dialects, so every suite writes
them alike: the reasoning by the reasoning parser's ``render`` (its start tag included, so the reply
opens reasoning itself whatever the stand-in prompt did) and the calls by the tool dialect's
``render`` classmethod. Each suite passes its own two calls.

None of these families has a tokenizer in the test data: every suite runs them over Qwen3's
tokenizer and template (the stand-in the suites already use for Kimi-K2), so their markers arrive
as several tokens each.

The engines' own parsers are named only where the engine's registry in its pinned venv has the
format (checked in each venv; /work/shared/PROTOCOLS.md, "Tool parsers — late-2026 families");
None: the engine has no parser for it, and the row says ``none``.

Stdlib and lmparse only: imported by every engine's suite.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from lmparse import ReasoningParserManager, ToolParserManager

STAND_IN_TOKENIZER = "qwen3"  # no vocabulary of these families in the test data
STAND_IN_TEMPLATE = "Qwen-Qwen3-0.6B.jinja"
NO_OWN = "none"  # the own-parser cell of an engine without a parser for the family
NOT_RUN = "—"  # and its result cell: nothing to run


@dataclass(frozen=True)
class NewFamily:
    name: str  # lmparse's family (and tool parser) name
    tool: str  # lmparse tool parser
    reasoning: str | None  # lmparse reasoning parser; None: the family has no reasoning markers
    vllm: tuple[str, str | None] | None  # vLLM 0.33.0's --tool-call-parser, --reasoning-parser
    sglang: tuple[str, str | None] | None  # SGLang 0.5.23's
    lmdeploy: tuple[str, str | None] | None = None  # LMDeploy 0.18.0 has none of them
    chat_template_kwargs: Mapping[str, Any] = field(default_factory=dict)

    def reply(self, calls: Sequence[tuple[str, str]], text: str = "Checking the weather.",
              between: str = "\n\n") -> str:
        """Reasoning (when the family has it), ``text``, then ``calls`` ((name, JSON arguments))."""
        head = ReasoningParserManager.get(self.reasoning).render("Which city?") if self.reasoning else ""
        return head + text + between + ToolParserManager.get(self.tool).render(list(calls))


NEW_FAMILIES = (
    NewFamily("muse", "muse", "muse", ("muse", "muse"), ("muse", "muse")),
    NewFamily("k2-horizon", "k2-horizon", "k2-horizon", ("k2_horizon", "k2_horizon"), ("k2_horizon", "k2_horizon")),
    NewFamily("inkling", "inkling", "inkling", ("inkling", "inkling"), ("inkling", "inkling")),
    NewFamily("dots", "dots", "dots", ("dots", None), ("dots", "dots")),  # vLLM 0.33: no dots reasoning parser
    NewFamily("iquest", "iquest", "iquest", None, ("iquest_q1", "iquest_q1")),
    NewFamily("iquest-coder-v2", "iquest-coder-v2", None, None, None),
    NewFamily("sarashina", "sarashina", None, None, None),
    NewFamily("gigachat35", "gigachat35", "gigachat35", None, ("gigachat35", "gigachat35"),
              chat_template_kwargs={"reasoning": True}),
    NewFamily("zaya", "zaya", "zaya", None, None),
    NewFamily("step5", "step5", "step5", ("step5", "step5"), None),
    NewFamily("ripple", "ripple", "ripple", None, None),
    NewFamily("mistral-v13", "mistral-v13", "mistral-v13", None, None),
)


def own_cell(names: tuple[str, str | None] | None, joiner: str) -> str:
    """The own-parser cell: the engine's names joined as that engine's rows write them."""
    if names is None:
        return NO_OWN
    return joiner.join(f"`{n}`" if n else NO_OWN for n in names)
