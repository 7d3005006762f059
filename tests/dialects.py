"""How each JSON dialect writes calls on the wire, for building test responses.

Written independently of the renderers in lmparse (which they also check), from
the official chat templates' layout.
"""

from __future__ import annotations

import json
from dataclasses import dataclass


@dataclass(frozen=True)
class Wire:
    name: str  # registry name
    open: str
    close: str
    field: str
    tokenizers: tuple[str, ...]
    block_sep: str = "\n"

    def call(self, name: str, args: str | None = None, args_first: bool = False, extra: str = "") -> str:
        quoted = json.dumps(name, ensure_ascii=False)
        if args is None:
            body = f'{{"name": {quoted}{extra}}}'
        elif args_first:
            body = f'{{"{self.field}": {args}, "name": {quoted}{extra}}}'
        else:
            body = f'{{"name": {quoted}, "{self.field}": {args}{extra}}}'
        return f"{self.open}{body}{self.close}"

    def calls(self, *pairs: tuple[str, str]) -> str:
        return self.block_sep.join(self.call(n, a) for n, a in pairs)


QWEN = Wire("qwen", "<tool_call>\n", "\n</tool_call>", "arguments", ("qwen2.5", "qwen3"))
INTERNLM = Wire("internlm", "<|action_start|><|plugin|>\n", "<|action_end|>", "parameters", ("internlm2",))
TAGGED = (QWEN, INTERNLM)
