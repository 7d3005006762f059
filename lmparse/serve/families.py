"""Family presets: the parsers, tokenizer and chat template that belong together.

``lmparse serve --family NAME`` binds one row; explicit ``--tool-call-parser`` /
``--reasoning-parser`` / ``--response-parser`` override it.  Names follow
PROTOCOLS.md.  A family whose parser is not registered (yet) is refused at startup
with the missing name, never half-served.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..registry import ReasoningParserManager, ResponseParserManager, ToolParserManager

__all__ = ["Family", "FAMILIES", "get_family", "missing_parsers"]


@dataclass(frozen=True)
class Family:
    name: str
    tool_parser: str | None
    reasoning_parser: str | None
    response_parser: str = "default"
    tokenizer: str | None = None  # directory name in the tokenizer test data (None: pseudo-tokenizer)
    template: str | None = None  # file name under templates/ (or the tokenizer dir's own template)
    description: str = ""

    def with_parsers(self, tool: str | None = None, reasoning: str | None = None,
                     response: str | None = None) -> Family:
        """This family with explicitly chosen parsers (``""`` turns one off)."""
        return replace(
            self,
            tool_parser=self.tool_parser if tool is None else (tool or None),
            reasoning_parser=self.reasoning_parser if reasoning is None else (reasoning or None),
            response_parser=self.response_parser if response is None else (response or "default"),
        )


_ROWS = [
    Family("qwen3", "qwen3", "qwen3", tokenizer="qwen3", template="Qwen-Qwen3-0.6B.jinja",
           description="Qwen3: <think> reasoning, <tool_call> JSON envelopes"),
    Family("qwen2.5", "qwen2d5", None, tokenizer="qwen2.5", template="Qwen-Qwen2.5-7B-Instruct.jinja",
           description="Qwen2.5: <tool_call> JSON envelopes"),
    Family("qwq", "qwen", "qwen-qwq", tokenizer="qwen2.5", template="Qwen-QwQ-32B.jinja",
           description="QwQ: <think> reasoning, <tool_call> JSON envelopes"),
    Family("hermes", "hermes", None, tokenizer="llama-3.2",
           template="NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja",
           description="Hermes 3: <tool_call> JSON envelopes"),
    Family("qwen3coder", "qwen3coder", None, tokenizer="qwen3", template="Qwen3-Coder.jinja",
           description="Qwen3-Coder: <tool_call><function=..><parameter=..> XML"),
    # Qwen3.5's own vocabulary is not in the test data: Qwen3's stands in (its tags are single tokens too).
    Family("qwen3.5", "qwen3.5", "qwen3.5", tokenizer="qwen3", template="Qwen3.5-4B.jinja",
           description="Qwen3.5/3.6: <think> reasoning (prompt decides), Qwen3-Coder XML calls"),
    Family("nemotron3", "nemotron3", "nemotron3", tokenizer="qwen3",
           template="NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.jinja",
           description="Nemotron 3 Nano: <think> reasoning (prompt decides), Qwen3-Coder XML calls"),
    Family("step3p5", "step3p5", "step3p5", tokenizer="qwen3", template="StepFun3.5-Flash.jinja",
           description="Step-3.5-Flash: always <think>, Qwen3-Coder XML calls back to back"),
    Family("granite4", "granite4", None, template="ibm-granite-granite-4.0.jinja",
           description="Granite 4.0/4.1: <tool_call> JSON envelopes, no reasoning markers"),
    Family("llama3", "llama3", None, tokenizer="llama-3.2", template="meta-llama-Llama-3.2-3B-Instruct.jinja",
           description="Llama 3.1/3.2: bare JSON or <|python_tag|> calls"),
    Family("pythonic", "pythonic", None, tokenizer="llama-3.2",
           description="Llama 3.2/4 pythonic: [f(a=1), g()]"),
    Family("internlm", "internlm", None, tokenizer="internlm2",
           description="InternLM2/2.5: <|action_start|><|plugin|> JSON"),
    Family("intern-s1", "intern-s1", "intern-s1",
           description="Intern-S1: <think> reasoning, <|action_start|><|plugin|> JSON"),
    Family("glm45", "glm45", "glm45", tokenizer="glm-4.5", template="GLM-4.6.jinja",
           description="GLM-4.5/4.6: <tool_call>NAME\\n<arg_key>..</arg_key>\\n<arg_value>.."),
    Family("glm47", "glm47", "glm45", tokenizer="glm-4.7-flash", template="GLM-4.7-Flash.jinja",
           description="GLM-4.7/5: <tool_call>NAME<arg_key>..</arg_key><arg_value>.."),
    Family("ling3", "ling3", "ling3", template="inclusionai-ling-3.0-flash.jinja",
           description="Ling 3.0: <think> reasoning (prompt decides), GLM-4.7 <arg_key> calls with newlines"),
    Family("deepseek-r1", "deepseek-r1", "deepseek-r1", tokenizer="deepseek-r1",
           description="DeepSeek-R1: <think> reasoning, <｜tool▁calls▁begin｜> fenced JSON"),
    Family("deepseek-v3", "deepseek-v3", "deepseek-v3", tokenizer="deepseek-r1",
           description="DeepSeek-V3-0324: <｜tool▁calls▁begin｜> fenced JSON"),
    Family("deepseek-v31", "deepseek-v31", "deepseek-v3", tokenizer="deepseek-v3.1",
           template="deepseek-ai-DeepSeek-V3.1.jinja",
           description="DeepSeek-V3.1: <｜tool▁call▁begin｜>NAME<｜tool▁sep｜>JSON"),
    Family("deepseek-v32", "deepseek-v32", "deepseek-v32", tokenizer="deepseek-v3.2",
           template="deepseek-ai-DeepSeek-V3.2.jinja",
           description="DeepSeek-V3.2: DSML <｜DSML｜function_calls>"),
    Family("deepseek-v4", "deepseek-v4", "deepseek-v4", tokenizer="deepseek-v4",
           template="deepseek-ai-DeepSeek-V4.jinja",
           description="DeepSeek-V4: DSML <｜DSML｜tool_calls>"),
    Family("kimi-k2", "kimi-k2", "kimi-k2", template="Kimi-K2-Thinking.jinja",
           description="Kimi-K2: <|tool_calls_section_begin|> sections (no public vocabulary: pseudo-tokens)"),
    Family("minimax-m2", "minimax-m2", "minimax-m2", tokenizer="minimax-m2", template="MiniMax-M2.jinja",
           description="MiniMax-M2: </think> only, <minimax:tool_call><invoke name=..> XML"),
    Family("seed-oss", "seed-oss", "seed-oss",
           description="Seed-OSS: <seed:think> reasoning, <seed:tool_call> Qwen3-Coder XML"),
    Family("mistral", "mistral", "mistral", template="Mistral-Small-3.2-24B-Instruct-2506.jinja",
           description="Mistral/Magistral: [THINK] reasoning, [TOOL_CALLS] calls"),
    Family("gemma4", "gemma4", "gemma4", tokenizer="gemma-4", template="google-gemma-4-31B-it.jinja",
           description="Gemma 4: <|channel>thought reasoning, <|tool_call>call:NAME{key:<|\"|>..<|\"|>}"),
    Family("gpt-oss", None, None, response_parser="gpt-oss", tokenizer="gpt-oss",
           template="openai-gpt-oss-120b.jinja",
           description="gpt-oss: Harmony channels (analysis, commentary to=functions.X, final)"),
    Family("kimi-k3", "kimi-k3", "kimi-k3", template="Kimi-K3.jinja",
           description="Kimi-K3: XTML <|open|>think/response/tools elements, typed <|open|>argument values "
                       "(no public vocabulary: pseudo-tokens)"),
    Family("minicpm5", "minicpm5", "minicpm5", template="openbmb-MiniCPM5-1B.jinja",
           description="MiniCPM5: <think> reasoning (prompt decides), <function name=..><param name=..> "
                       "calls with CDATA strings (no public vocabulary: pseudo-tokens)"),
    Family("minimax-m3", "minimax-m3", "minimax-m3", template="MiniMax-M3.jinja",
           description="MiniMax-M3: <mm:think> reasoning, ]<]minimax[>[ namespaced nested XML (no vocabulary: "
                       "pseudo-tokens)"),
    Family("hunyuan", "hunyuan", "hunyuan", template="tencent-Hy3.jinja",
           description="Tencent Hy3: <think:opensource> reasoning, <tool_calls:opensource> GLM-style pairs "
                       "(no vocabulary: pseudo-tokens)"),
    # No V4.1 template or tokenizer is published: V4's vocabulary stands in (assumed shared).
    Family("deepseek-v41", "deepseek-v41", "deepseek-v41", tokenizer="deepseek-v4",
           description="DeepSeek-V4.1: DSML with spaced tags <｜DSML｜ calls>"),
    Family("cohere-command", "cohere-command", "cohere-command", template="Cohere2MoE.jinja",
           description="Cohere Command A/R7B/North: <|START_THINKING|> reasoning, <|START_ACTION|>[JSON] calls"),
    Family("apertus", "apertus", "apertus", template="Apertus-8B-Instruct.jinja",
           description="Apertus: <|inner_prefix|> reasoning, <|tools_prefix|>[{\"NAME\": {..}}] calls"),
    Family("lfm2", "lfm2", "lfm2", template="LFM2.5-8B-A1B.jinja",
           description="LFM2/LFM2.5: <think> reasoning (model opens), <|tool_call_start|>[f(a='x')] calls"),
    Family("gigachat3", "gigachat3", None, template="GigaChat3.1-10B-A1.8B.jinja",
           description="GigaChat 3/3.1: <|function_call|> or a 'function call' turn, JSON; no reasoning"),
]
FAMILIES: dict[str, Family] = {row.name: row for row in _ROWS}


def get_family(name: str) -> Family:
    try:
        return FAMILIES[name]
    except KeyError:
        raise ValueError(f"unknown family {name!r}; known: {', '.join(sorted(FAMILIES))}") from None


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
