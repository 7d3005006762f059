"""How each XML-like dialect writes calls on the wire, for building test responses.

Written independently of the renderers in lmparse (which the tests also check), from
the official chat templates' layout: one function per layout turns a call into the
text between the outer tags.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

Params = Sequence[tuple[str, str]]  # (key, value text as written)


def qwen_call(name: str, params: Params) -> str:
    body = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in params)
    return f"\n<function={name}>\n{body}</function>\n"


def seed_call(name: str, params: Params) -> str:
    body = "".join(f"<parameter={k}>{v}</parameter>\n" for k, v in params)
    return f"\n<function={name}>\n{body}</function>\n"


def glm45_call(name: str, params: Params) -> str:
    body = "".join(f"<arg_key>{k}</arg_key>\n<arg_value>{v}</arg_value>\n" for k, v in params)
    return f"{name}\n{body}"


def glm47_call(name: str, params: Params) -> str:
    return name + "".join(f"<arg_key>{k}</arg_key><arg_value>{v}</arg_value>" for k, v in params)


def minimax_call(name: str, params: Params) -> str:
    body = "".join(f'<parameter name="{k}">{v}</parameter>\n' for k, v in params)
    return f'<invoke name="{name}">\n{body}</invoke>\n'


@dataclass(frozen=True)
class XmlWire:
    id: str  # test id
    name: str  # tool parser registry name
    reasoning: str  # reasoning parser registry name
    open: str
    close: str
    inner: Callable[[str, Params], str]  # one call, as written between the outer tags
    tokenizers: tuple[str, ...]
    block_sep: str = "\n"
    think_open: str = ""  # what a reply writes to enter reasoning ("" if it starts there)
    think_close: str = "</think>"
    block_lead: str = ""  # text the block starts with before its first call (MiniMax: "\n")

    def call(self, name: str, params: Params = ()) -> str:
        """One outer block holding one call."""
        return self.block((name, params))

    def block(self, *calls: tuple[str, Params]) -> str:
        """One outer block holding several calls."""
        return self.open + self.block_lead + "".join(self.inner(n, p) for n, p in calls) + self.close

    def calls(self, *calls: tuple[str, Params]) -> str:
        """One block per call, separated as the template separates them."""
        return self.block_sep.join(self.call(n, p) for n, p in calls)


QWEN3CODER = XmlWire("qwen3coder", "qwen3coder", "default", "<tool_call>", "</tool_call>", qwen_call,
                     ("qwen3", "qwen2.5"))
GLM45 = XmlWire("glm45", "glm45", "glm45", "<tool_call>", "</tool_call>", glm45_call, ("glm-4.5", "glm-4.7-flash"))
GLM47 = XmlWire("glm47", "glm47", "glm45", "<tool_call>", "</tool_call>", glm47_call, ("glm-4.7-flash", "glm-4.5"),
                block_sep="")
# No public Seed-OSS tokenizer: arbitrary chunkings only.
SEED_OSS = XmlWire("seed-oss", "seed-oss", "seed-oss", "<seed:tool_call>", "</seed:tool_call>", seed_call, (),
                   think_open="<seed:think>", think_close="</seed:think>")
MINIMAX_M2 = XmlWire("minimax-m2", "minimax-m2", "minimax-m2", "<minimax:tool_call>", "</minimax:tool_call>",
                     minimax_call, ("minimax-m2",), block_lead="\n")
WIRES = (QWEN3CODER, GLM45, GLM47, SEED_OSS, MINIMAX_M2)
