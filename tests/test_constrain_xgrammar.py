"""Every tool dialect's constraints compile with XGrammar and accept exactly the calls they should.

For every registered dialect (one row per class) x {required, named tool, parallel false}:
the structural tag (vLLM / SGLang) and the GBNF grammar (llama.cpp; XGrammar's EBNF parser
reads GBNF) are compiled against the real Qwen3 vocabulary, then fed the dialect's own
rendering of calls (what the parser parses): a valid call is accepted to the end of the
reply, while plain text, a call breaking the schema, a tool the choice excludes and, where
one call is the limit, a second call are refused.  Skips without the ``xgrammar`` extra.
"""

from __future__ import annotations

import gzip
import json

import pytest

from lmparse.constrain import gbnf_for, structural_tag_for
from lmparse.registry import ToolParserManager
from tests.support.tokenizers import testdata_dir as _testdata_dir

xgr = pytest.importorskip("xgrammar", reason="the xgrammar extra is not installed")

WEATHER = {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"},
                                             "unit": {"enum": ["c", "f"]}}, "required": ["city"]}
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": WEATHER}},
         {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object", "properties": {
             "zone": {"type": "string"}}}}}]
NAMED = {"type": "function", "function": {"name": "get_weather"}}
GOOD = ("get_weather", '{"city": "Paris", "days": 3, "unit": "c"}')
OTHER = ("get_time", '{"zone": "CET"}')
MISSING_CITY = ("get_weather", '{"days": 3}')
MODES = {"required": ("required", True), "named": (NAMED, True), "parallel-false": ("required", False)}


def _dialects() -> list[str]:
    seen, names = set(), []
    for name in ToolParserManager.names():
        cls = ToolParserManager.get(name)
        if cls not in seen:
            seen.add(cls)
            if cls.call_syntax() is not None:  # the others refuse (Unconstrainable), tested with their dialect
                names.append(name)
    return names


DIALECTS = _dialects()


@pytest.fixture(scope="module")
def compiler() -> object:
    root = _testdata_dir()
    path = root / "qwen3" / "tokenizer.json.gz" if root else None
    if path is None or not path.is_file():
        pytest.skip("tokenizer qwen3: no test data (run `make testdata` or set LMPARSE_TESTDATA)")
    from tokenizers import Tokenizer
    from transformers import PreTrainedTokenizerFast

    fast = PreTrainedTokenizerFast(tokenizer_object=Tokenizer.from_str(gzip.decompress(path.read_bytes()).decode()))
    info = xgr.TokenizerInfo.from_huggingface(fast, vocab_size=len(fast), stop_token_ids=[151645])
    return xgr.GrammarCompiler(info)


def accepts(compiled: object, text: str) -> bool:
    """Whether ``text`` is a whole reply the grammar allows (the end-of-turn token may follow)."""
    matcher = xgr.GrammarMatcher(compiled)
    return matcher.accept_string(text) and matcher.accept_token(151645)


def render(dialect: str, *calls: tuple[str, str]) -> str:
    return ToolParserManager.get(dialect).render(list(calls))


def _compiled(compiler: object, kind: str, dialect: str, mode: str) -> object:
    choice, parallel = MODES[mode]
    if kind == "structural_tag":
        return compiler.compile_structural_tag(json.dumps(structural_tag_for(dialect, TOOLS, choice, parallel)))
    return compiler.compile_grammar(gbnf_for(dialect, TOOLS, choice, parallel))


@pytest.mark.parametrize("kind", ["structural_tag", "gbnf"])
@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("dialect", DIALECTS)
def test_constraint_compiles_and_accepts_only_valid_calls(compiler: object, kind: str, mode: str,
                                                          dialect: str) -> None:
    compiled = _compiled(compiler, kind, dialect, mode)
    assert accepts(compiled, render(dialect, GOOD))
    assert not accepts(compiled, "Sure, let me check the weather.")
    assert not accepts(compiled, "")
    assert not accepts(compiled, render(dialect, MISSING_CITY))
    assert accepts(compiled, render(dialect, OTHER)) is (mode != "named")
    assert accepts(compiled, render(dialect, GOOD, GOOD)) is (mode == "required")


@pytest.mark.parametrize("kind", ["structural_tag", "gbnf"])
def test_gpt_oss_harmony_call_after_its_analysis(compiler: object, kind: str) -> None:
    from lmparse.response.harmony import HarmonyResponseParser, render_reply

    reasoning = HarmonyResponseParser.reasoning_block()
    if kind == "structural_tag":
        compiled = compiler.compile_structural_tag(json.dumps(structural_tag_for("gpt-oss", TOOLS, NAMED,
                                                                                 reasoning=reasoning)))
    else:
        compiled = compiler.compile_grammar(gbnf_for("gpt-oss", TOOLS, NAMED, reasoning=reasoning))
    call = ("call", *GOOD)
    assert accepts(compiled, render_reply([("analysis", "Paris, then."), call], header="model"))
    assert accepts(compiled, render_reply([call], header="model"))
    assert not accepts(compiled, render_reply([("analysis", "Paris."), ("final", "Sunny.")], header="model"))
    assert not accepts(compiled, render_reply([("call", *OTHER)], header="model"))


@pytest.mark.parametrize("kind", ["structural_tag", "gbnf"])
def test_reasoning_block_may_come_first(compiler: object, kind: str) -> None:
    reasoning = ("<think>", "</think>", False)
    if kind == "structural_tag":
        compiled = compiler.compile_structural_tag(json.dumps(structural_tag_for("qwen3", TOOLS, "required",
                                                                                 reasoning=reasoning)))
    else:
        compiled = compiler.compile_grammar(gbnf_for("qwen3", TOOLS, "required", reasoning=reasoning))
    call = render("qwen3", GOOD)
    assert accepts(compiled, "<think>\nParis, then.\n</think>\n\n" + call)
    assert accepts(compiled, call)
    assert not accepts(compiled, "<think>\nParis, then.\n</think>\n\nIt is sunny.")


@pytest.mark.parametrize("kind", ["structural_tag", "gbnf"])
def test_reply_that_starts_inside_reasoning_must_close_it(compiler: object, kind: str) -> None:
    reasoning = (None, "</think>", True)
    if kind == "structural_tag":
        compiled = compiler.compile_structural_tag(json.dumps(structural_tag_for("minimax-m2", TOOLS, NAMED,
                                                                                 reasoning=reasoning)))
    else:
        compiled = compiler.compile_grammar(gbnf_for("minimax-m2", TOOLS, NAMED, reasoning=reasoning))
    call = render("minimax-m2", GOOD)
    assert accepts(compiled, "Paris, then.</think>\n" + call)
    assert not accepts(compiled, call)


@pytest.mark.parametrize("kind", ["structural_tag", "gbnf"])
def test_gemma_strings_hold_any_text_but_their_delimiter(compiler: object, kind: str) -> None:
    """Gemma 4's raw ``<|"|>`` strings: quotes, braces, commas and ``<`` pass; the delimiter ends one."""
    compiled = _compiled(compiler, kind, "gemma4", "named")
    hazards = 'Paris "FR", {x}: <b> <|x|> a<|"b'
    assert accepts(compiled, render("gemma4", ("get_weather", json.dumps({"city": hazards}))))
    assert not accepts(compiled, '<|tool_call>call:get_weather{city:<|"|>a<|"|>b<|"|>}<tool_call|>')
    assert not accepts(compiled, '<|tool_call>call:get_weather{"city":<|"|>Paris<|"|>}<tool_call|>')  # keys are bare
