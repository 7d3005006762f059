"""The five families the SGLang tests drive: a reply with reasoning, content and two calls, its
request, the lmparse and in-tree SGLang parser names, and its real-token streams; and the
late-2026 families (``NEW``, tests/integrations/new_families.py), whose clean reply is rendered by
lmparse's dialects and streamed in Qwen3's tokens (no tokenizer of theirs in the test data)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lmparse import ReasoningParserManager, ToolParserManager, create_parser, normalize_request
from tests.integrations.new_families import NEW_FAMILIES, STAND_IN_TEMPLATE, STAND_IN_TOKENIZER, NewFamily
from tests.support.tokenizers import load_tokenizer, roundtrips, token_chunks
from tests.support.wires import ALL_WIRES, TOOLS, Wire, pseudo_tokens

WIRES = {wire.id: wire for wire in ALL_WIRES}
WEATHER = [tool for tool in TOOLS if tool["function"]["name"] == "get_weather"]
PARIS, TOKYO = '{"city": "Paris", "days": 2}', '{"city": "Tokyo", "days": 1}'
MULTI = 4  # tokens per increment in the multi-token streams


@dataclass(frozen=True)
class Family:
    wire: str  # tests/support/wires.py id, which is also the lmparse tool parser name
    reasoning: str | None  # lmparse reasoning parser name (None: the family has none)
    sglang_tool: str | None  # SGLang's in-tree --tool-call-parser for the family (None: it has none)
    sglang_reasoning: str | None  # and its --reasoning-parser
    think_open: str  # what the reply writes to open reasoning ("" when the template opened it)
    chat_template_kwargs: dict[str, Any]
    tokenizer: str | None  # None: no tokenizer in the test data; markers whole, text in 1-4 chars
    template: str  # the family's chat template in the test data's templates/, which SGLang loads
    new: NewFamily | None = None  # a late-2026 family: its reply rendered by lmparse's dialects

    @property
    def server_tokenizer(self) -> str:
        """The tokenizer SGLang renders the prompt with (Kimi has none: Qwen3's stands in)."""
        return self.tokenizer or "qwen3"

    @property
    def tool(self) -> str:
        return WIRES[self.wire].tool_parser

    def calls_text(self) -> str:
        if self.new is not None:
            return ToolParserManager.get(self.tool).render([("get_weather", PARIS), ("get_weather", TOKYO)])
        wire: Wire = WIRES[self.wire]
        return wire.calls(("get_weather", PARIS), ("get_weather", TOKYO))

    def text(self, between: str = "\n\nChecking both cities.\n") -> str:
        """Reasoning, ``between`` (the text before the calls), two calls."""
        if self.new is not None:
            head = ReasoningParserManager.get(self.reasoning).render("The user wants two forecasts.") \
                if self.reasoning else ""
            return head + between.lstrip("\n") + self.calls_text()
        return f"{self.think_open}The user wants two forecasts.</think>{between}{self.calls_text()}"

    def request(self) -> dict[str, Any]:
        return {"tools": WEATHER, "chat_template_kwargs": self.chat_template_kwargs}

    @property
    def own(self) -> tuple[str, str | None] | None:
        """SGLang's in-tree parser names for the family, or None where it has none."""
        return (self.sglang_tool, self.sglang_reasoning) if self.sglang_tool else None

    def force_reasoning(self) -> bool:
        """Whether the reply starts inside reasoning, as SGLang's serving layer decides it from the
        template and the request (given to its ReasoningParser as ``force_reasoning``)."""
        if self.reasoning is None:
            return False
        return ReasoningParserManager.get(self.reasoning)(normalize_request(self.request())).starts_in_reasoning()

    def lmparse_reply(self, text: str | None = None) -> tuple[str, str, tuple[tuple[str, str], ...]]:
        text = self.text() if text is None else text
        message = create_parser(self.tool, self.reasoning, request=self.request()).parse_complete(text)
        calls = tuple((c.function.name, c.function.arguments) for c in message.tool_calls)
        return message.content or "", message.reasoning_content or "", calls

    def one_token_deltas(self, text: str | None = None) -> list[str]:
        text = self.text() if text is None else text
        if self.tokenizer is None:
            return pseudo_tokens(text, WIRES[self.wire].pseudo_token_markers)
        tok = load_tokenizer(self.tokenizer)
        assert roundtrips(tok, text), f"{self.tokenizer} does not reproduce the reply"
        return token_chunks(tok, text)

    def deltas(self, mode: str, size: int = MULTI) -> list[str]:
        if mode == "whole":
            return [self.text()]
        one = self.one_token_deltas()
        size = 1 if mode == "one-token" else size
        return ["".join(one[i:i + size]) for i in range(0, len(one), size)]


def merged(chunks: list[str], start: int, end: int) -> list[str]:
    """``chunks`` with every chunk that overlaps the text span [start, end) joined into one."""
    out: list[str] = []
    joined, offset = "", 0
    for chunk in chunks:
        begins, offset = offset, offset + len(chunk)
        if begins < end and offset > start:
            joined += chunk
            continue
        if joined and begins >= end:
            out.append(joined)
            joined = ""
        out.append(chunk)
    return [*out, joined] if joined else out


FAMILIES = [
    Family("qwen", "qwen3", "qwen", "qwen3", "<think>\n", {}, "qwen3", "Qwen-Qwen3-0.6B.jinja"),
    Family("qwen3coder", "qwen3", "qwen3_coder", "qwen3", "<think>\n", {}, "qwen3", "Qwen3-Coder.jinja"),
    Family("glm47", "glm45", "glm47", "glm45", "<think>", {}, "glm-4.7-flash", "GLM-4.7-Flash.jinja"),
    Family("deepseek-v32", "deepseek-v32", "deepseekv32", "deepseek-v3", "", {"thinking": True}, "deepseek-v3.2", "deepseek-ai-DeepSeek-V3.2.jinja"),
    Family("kimi-k2", "kimi-k2", "kimi_k2", "kimi_k2", "<think>", {}, None, "Kimi-K2-Thinking.jinja"),
]
# The late-2026 families: no template or tokenizer of theirs here, Qwen3's stand in (as for Kimi-K2's prompt).
NEW = [Family(f.name, f.reasoning, *(f.sglang or (None, None)), "", dict(f.chat_template_kwargs),
              STAND_IN_TOKENIZER, STAND_IN_TEMPLATE, new=f) for f in NEW_FAMILIES]
MODES = ("one-token", "multi-token", "whole")
