"""vLLM 0.33's parsers, driven the way its chat server drives them (peer side, vLLM venv only).

The server composes the tool and reasoning parsers with ``ParserManager.get_parser`` and,
per streamed step, calls ``Parser.parse_delta(delta_text, delta_token_ids, request,
prompt_token_ids, finished=...)`` (``ChatStreamProcessor.step``); ``parse_delta`` keeps
``previous_text`` / ``current_text`` / the token id lists and calls the reasoning parser's
``extract_reasoning_streaming`` and the tool parser's ``extract_tool_calls_streaming``
with them.  The non-streaming path is ``Parser.parse(text, request, enable_auto_tools=True)``.
Token ids come from the family's real tokenizer: each chunk carries the tokens that end
inside it, as a detokenizer that emitted the chunk's text would have.
"""

from __future__ import annotations

import bisect
import os
from importlib.metadata import version
from types import SimpleNamespace
from typing import Any
from collections.abc import Iterator

from .cases import Case, complete_result
from .tokenizer_dir import model_dir

os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")


class _Stream:
    __slots__ = ("parser", "request")

    def __init__(self, parser: Any, request: Any) -> None:
        self.parser, self.request = parser, request


def _as_openai(delta: Any) -> Any:
    """vLLM names the reasoning field ``reasoning``; the check reads ``reasoning_content``."""
    return SimpleNamespace(content=delta.content, reasoning_content=delta.reasoning, tool_calls=delta.tool_calls)


class Adapter:
    def __init__(self) -> None:
        from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
        from vllm.parser.parser_manager import ParserManager
        from vllm.tokenizers import get_tokenizer

        self.impl = f"vllm {version('vllm')}"
        self._request_cls = ChatCompletionRequest
        self._manager = ParserManager
        self._get_tokenizer = get_tokenizer
        self._tokenizers: dict[str, Any] = {}
        self._classes: dict[tuple, Any] = {}

    def _tokenizer(self, source: str) -> Any:
        if source not in self._tokenizers:
            self._tokenizers[source] = self._get_tokenizer(str(model_dir(source)))
        return self._tokenizers[source]

    def new_state(self, case: Case, parsers: dict) -> _Stream:
        tokenizer = self._tokenizer(case.tokenizer)
        names = (parsers.get("tool"), parsers.get("reasoning"))
        cls = self._classes.get(names)
        if cls is None:
            cls = self._classes[names] = self._manager.get_parser(
                tool_parser_name=names[0], reasoning_parser_name=names[1], enable_auto_tools=True,
                tokenizer=tokenizer)
        request = self._request_cls(model="bench", messages=[{"role": "user", "content": "go"}],
                                    tools=case.tools or None, tool_choice="auto" if case.tools else None)
        return _Stream(cls(tokenizer, request.tools, chat_template_kwargs={}, model_config=None), request)

    def _token_ends(self, case: Case) -> tuple[list[int], list[int]]:
        encoded = self._tokenizer(case.tokenizer)(case.text, add_special_tokens=False, return_offsets_mapping=True)
        return encoded["input_ids"], [end for _start, end in encoded["offset_mapping"]]

    def prepare(self, case: Case, pieces: list[str]) -> list[tuple[str, list[int], bool]]:
        """Each piece with the ids of the tokens that end inside it."""
        ids, ends = self._token_ends(case)
        fed, at, done = [], 0, 0
        for i, piece in enumerate(pieces):
            at += len(piece)
            upto = bisect.bisect_right(ends, at) if i < len(pieces) - 1 else len(ids)
            fed.append((piece, ids[done:upto], i == len(pieces) - 1))
            done = upto
        return fed

    def align(self, case: Case, pieces: list[str]) -> list[str]:
        """The pieces with every cut moved forward to the end of the token it falls in: a vLLM
        server only ever streams whole tokens, whose text its detokenizer decoded."""
        _ids, ends = self._token_ends(case)
        aligned, start, at = [], 0, 0
        for piece in pieces:
            at += len(piece)
            i = bisect.bisect_left(ends, at)
            cut = ends[i] if i < len(ends) else len(case.text)
            if cut > start:
                aligned.append(case.text[start:cut])
                start = cut
        if start < len(case.text):
            aligned.append(case.text[start:])
        return aligned

    def stream(self, state: _Stream, fed: list) -> Iterator[Any]:
        parse, request = state.parser.parse_delta, state.request
        prompt: list[int] | None = []  # the server passes the prompt's ids on the first step
        for text, ids, finished in fed:
            delta = parse(text, ids, request, prompt, finished=finished)
            prompt = None
            if delta is not None:
                yield _as_openai(delta)

    def feed(self, state: _Stream, fed: list) -> None:
        parse, request = state.parser.parse_delta, state.request
        prompt: list[int] | None = []
        for text, ids, finished in fed:
            parse(text, ids, request, prompt, finished=finished)
            prompt = None

    def complete(self, state: _Stream, case: Case) -> list[Any]:
        reasoning, content, calls = state.parser.parse(case.text, state.request, enable_auto_tools=True)
        return complete_result(content, reasoning, calls or ())
