"""vLLM's published cases for ``muse`` and ``inkling``, restated where lmparse gives the same result.

Sources read (vllm-project/vllm): ``tests/parser/engine/test_muse_glimmer.py`` (21 tests; there is no
muse test under ``tests/tool_parsers/``) and ``tests/parser/engine/test_inkling.py`` (70 tests).  Each
case below is written from what the peer's test feeds and asserts (the reply text, then the
reasoning, content and calls it expects), checked here complete, in several chunkings and in
pseudo-token chunks (``check_parse``).  A peer test of its own internals (engine states, adapter
registration, a partial-string helper) is restated as the reply it stands for when there is one,
else left out as not applicable.  Where the peer reads the reply in two passes (reasoning, then
tool), the comparison is on the end result.

Counts (identical / differing / not applicable, of the tests in the file):
  muse     18 / 2 / 1 of 21
  inkling  55 / 6 / 9 of 70

Differing, muse:
- ``test_bare_header_is_untagged_content``: `` <|message|>public text<|eot|>`` (a header with no recipient) is
  content ``public text`` for vLLM's Glimmer parser; lmparse keeps `` <|message|>public text`` as content (it
  drops a bare header only after ``<|start|>assistant``; PROTOCOLS.md: Spark reads a bare header as reasoning,
  Glimmer as content, so the two peers' own parsers disagree).
- ``test_reasoning_suppressed_when_not_requested``: ``include_reasoning: false`` drops the reasoning in vLLM's
  parser; lmparse's parser ignores that field (reasoning is still returned).
Not applicable, muse: ``TestAdjustRequest`` (vLLM forces ``skip_special_tokens=False``; lmparse reads text).
Not asserted by the peer, but different: with no tool schema, lmparse keeps ``<atem:parameter name="a">1``
as the string ``"1"`` (typed only by a schema); vLLM's ``muse_glimmer`` decodes JSON first (the number 1).

Identical since the headerless tool block is read (branch ``inkling2``): a ``<|content_invoke_tool_json|>``
block with no name header -- at the reply's start (the prompt ends in ``<|message_model|>``, and vLLM's
``_tool_block`` writes the kind marker directly), or after a text block closed without ``<|message_model|>``
-- is a call named by its body (``test_headerless_*`` below, 17 tests): ``test_parallel_tool_calls``,
``test_nested_args``, ``test_text_after_tool_call``, ``test_incomplete_tool_call_at_eos``,
``test_name_streams_before_args_complete``, ``test_streamed_args_are_object_only``,
``test_parallel_calls_streaming``, ``test_adapter_round_trip``, ``test_multi_tool_round_trip``,
``test_tool_then_text``, ``test_two_tools_then_text``, ``test_end_sampling_tool_closer_round_trips``,
``test_incomplete_tool_at_eos`` (two-pass), ``test_tool_start_from_message_header_streaming``,
``test_content_state_tool_start_streaming``, ``test_tool_block_non_streaming``, ``test_tool_block_streaming``.

Differing, inkling (kept by lmparse's rules; pinned by ``test_kept_*`` below):
- ``test_function_name_header_before_tool_start_streaming``: header ``someFn``, body name ``get_weather``: vLLM
  takes the body's name, lmparse the header's.  The header is the function name (PROTOCOLS.md: HEADER = the
  function name; the template writes the two equal), and it arrives first: a call's identity goes out first
  (``CallStart`` carries the name, docs/architecture.md section 4), so lmparse names the call when the header
  ends instead of holding it back until the body's ``name``.  With tools offered, ``someFn`` is not a declared
  tool and the call is dropped (``dropped``), never renamed.
- ``test_non_object_args_rejected``: ``"args": [1]`` is refused by vLLM (no call); lmparse keeps the call with
  arguments ``{}`` and records ``[1]`` as ``dropped`` (malformed): rule 6 (issue 23, docs/architecture.md)
  keeps every call's arguments a JSON object, and a call already named (the header names it before the
  body) cannot be withdrawn from a stream, the same for every dialect.
- ``test_tool_choice_none_non_streaming`` / ``_streaming``: vLLM drops the call and the framing and returns
  ``visible``; lmparse with ``tool_choice="none"`` turns tool parsing off, and markup with tools off stays
  content verbatim (``create_parser``; ``ParserRequest`` tools off), framing included.
- ``TestToolParserWithoutReasoningParser.test_thinking_then_text_keeps_structure`` /
  ``test_thinking_then_tool_still_promotes``: with no reasoning parser vLLM still drops the thinking block;
  lmparse returns it as content (``<|content_thinking|>plan…``): without a reasoning parser there is no
  reasoning channel, and no reply text is dropped (conservation, docs/architecture.md).  The tool call of the
  second test is parsed (the ``<|message_model|>`` before an empty header opens it); only the content differs.
Not applicable, inkling: the arg converter's partial-input cases (3), ``test_adapters_resolve``, the
two-pass handoff test whose text and token ids disagree (``..._handoff_uses_text_markers``), the two
``StreamingParserEngine`` event tests, ``test_reset_reuse_after_incomplete_span`` (lmparse builds one
parser per response) and ``test_non_streaming_count_after_replay`` (adapter replay).
"""

from __future__ import annotations

import re

import pytest

from lmparse import create_parser

from .support.stream import Expected, check_parse, decoded

# ---- muse ---------------------------------------------------------------------------------------

NEXT = "<|eom|><|start|>assistant"
MUSE_TOKENS = r"<\|(?:start|message|eom|eot)\|>"


def pieces(text: str, markers: str) -> list[str]:
    """Markers whole, every other character alone (vLLM's mock tokenizer)."""
    out: list[str] = []
    for i, part in enumerate(re.split(f"({markers})", text)):
        out.extend([part] if i % 2 else list(part))
    return out


def muse_parse(text: str, expected: Expected | None = None):
    def make():
        return create_parser(tool_parser="muse", reasoning_parser="muse", request=None)

    return check_parse(make, text, expected, {"mock-tokens": pieces(text, MUSE_TOKENS)})


def atem(name: str, params: dict[str, str], extra: str = "") -> str:
    body = "".join(f'<atem:parameter name="{k}">{v}</atem:parameter>\n' for k, v in params.items())
    return (f' to={name}<|message|><atem:function_calls>\n<atem:invoke name="{name}">\n{body}</atem:invoke>\n'
            f"{extra}</atem:function_calls>")


THOUGHT_THEN_ANSWER = f" to=self<|message|>Think about it.{NEXT} to=user<|message|>The answer is 42.<|eot|>"
THOUGHT_THEN_READ = " to=self<|message|>I should read the hostname file." + NEXT + atem("read.read", {"path": "/etc/hostname"})
CUT_THOUGHT = (" to=self<|message|>Maybe I should call <atem:function_calls>\n<atem:invoke name=\"read.read\">\n"
               "<atem:parameter name=\"path\">/etc/hostname</atem:parameter>\n</atem:invoke>\n</atem:function_calls>"
               " but wait")


def test_muse_reasoning_then_answer():  # non-streaming, chunks 1/3/17, token by token
    muse_parse(THOUGHT_THEN_ANSWER, Expected("The answer is 42.", "Think about it."))


def test_muse_answer_only():  # non-streaming and token by token
    muse_parse(" to=user<|message|>Just a direct answer.<|eot|>", Expected("Just a direct answer."))


def test_muse_unframed_text_is_content():
    muse_parse("Just a direct answer.", Expected("Just a direct answer."))


def test_muse_reasoning_messages_are_joined():
    text = f" to=self<|message|>A{NEXT} to=self<|message|>B{NEXT} to=user<|message|>C<|eot|>"
    muse_parse(text, Expected("C", "AB"))


def test_muse_reasoning_then_namespaced_call():  # non-streaming, streamed handoff, token by token
    content, reasoning, calls = decoded(muse_parse(THOUGHT_THEN_READ))
    assert (content, reasoning) == (None, "I should read the hostname file.")
    assert calls == [("read.read", {"path": "/etc/hostname"})]


def test_muse_two_calls_one_with_a_stray_invoke_close():
    text = (" to=self<|message|>need two calls" + NEXT + atem("math.add", {"a": "1"}, extra="</atem:invoke>\n")
            + NEXT + atem("math.mul", {"a": "3"}) + "<|eot|>")
    content, reasoning, calls = muse_parse(text)
    assert reasoning == "need two calls"
    assert [name for name, _ in calls] == ["math.add", "math.mul"]


def test_muse_cut_off_reasoning_quoting_atem_stays_reasoning():  # non-streaming, chunks of 3, tokens
    content, reasoning, calls = muse_parse(CUT_THOUGHT)
    assert reasoning is not None and reasoning.startswith("Maybe I should call ")
    assert not content and calls == []


def test_muse_prose_to_is_not_a_header():
    text = f" to=self<|message|>set flag to=5 and send it to=alice{NEXT} to=user<|message|>done<|eot|>"
    muse_parse(text, Expected("done", "set flag to=5 and send it to=alice"))


def test_muse_prose_to_streamed_char_by_char():
    muse_parse(" to=self<|message|>send it to=alice then stop<|eom|>", Expected(None, "send it to=alice then stop"))


def test_muse_reasoning_left_open_before_a_tool_header():
    text = " to=self<|message|>calling now" + atem("weather.get", {"city": "Paris"})
    _, _, calls = decoded(muse_parse(text))
    assert calls == [("weather.get", {"city": "Paris"})]


def test_muse_reasoning_token_count():
    parser = create_parser(tool_parser="muse", reasoning_parser="muse", request=None)
    chunks = pieces(THOUGHT_THEN_ANSWER, MUSE_TOKENS)
    for i, chunk in enumerate(chunks):
        parser.stream_chunk(chunk, [1], final=i == len(chunks) - 1)
    assert parser.reasoning_tokens == len("Think about it.")


# ---- inkling ------------------------------------------------------------------------------------

MODEL, TEXT, THINK = "<|message_model|>", "<|content_text|>", "<|content_thinking|>"
JSON_CALL, TEXT_CALL, ERROR = "<|content_invoke_tool_json|>", "<|content_invoke_tool_text|>", "<|content_tool_error|>"
END, END_SAMPLING = "<|end_message|>", "<|content_model_end_sampling|>"
INKLING_TOKENS = r"<\|(?:message_model|end_message|content_[a-z_]+)\|>"
WEATHER = [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {}}}}]


def call(name: str, args: str, header: str | None = None) -> str:
    """A tool block as the template writes it: the name header, then the JSON body."""
    return f'{name if header is None else header}{JSON_CALL}{{"name":"{name}","args":{args}}}{END}'


def inkling_parse(text: str, expected: Expected | None = None, *, reasoning: bool = True, request=None,
                  prompt: str | None = None):
    def make():
        return create_parser(tool_parser="inkling", reasoning_parser="inkling" if reasoning else None,
                             request=request, prompt=prompt)

    result = check_parse(make, text, None, {"mock-tokens": pieces(text, INKLING_TOKENS)})
    if expected is not None:
        assert decoded(result) == decoded(expected.as_tuple())
    return result


@pytest.mark.parametrize("end", ["", END, END_SAMPLING])
def test_inkling_bare_text_after_the_prompts_opener(end):
    inkling_parse(f"hello world{end}", Expected("hello world"))


def test_inkling_text_block():  # also the two-pass parser and the tool parser alone, with a tool offered
    inkling_parse(f"{TEXT}hello world{END}", Expected("hello world"))
    for reasoning in (True, False):
        inkling_parse(f"{TEXT}The answer is 42.{END}", Expected("The answer is 42."), reasoning=reasoning,
                      request={"tools": WEATHER})


def test_inkling_reasoning_text_and_call():
    text = f"{THINK}I should check the weather.{END}{MODEL}{TEXT}Let me check.{END}{MODEL}" + call(
        "get_weather", '{"city":"SF"}')
    inkling_parse(text, Expected("Let me check.", "I should check the weather.", [("get_weather", '{"city":"SF"}')]))


def test_inkling_header_name_is_not_content():  # also with the prompt's tail given
    expected = Expected(None, None, [("get_weather", '{"city":"SF"}')])
    inkling_parse(call("get_weather", '{"city":"SF"}'), expected)
    inkling_parse(call("get_weather", '{"city":"SF"}'), expected, prompt=END + MODEL)


@pytest.mark.parametrize("kind", [TEXT_CALL, ERROR])
def test_inkling_text_call_and_error_blocks_are_text(kind):
    inkling_parse(f"{kind}do something{END}", Expected("do something"))


def test_inkling_end_sampling_closes_a_block():
    inkling_parse(f"{THINK}hm{END}{MODEL}{TEXT}hi{END_SAMPLING}", Expected("hi", "hm"))
    inkling_parse(f"{TEXT}hi{END_SAMPLING}", Expected("hi"), request={"tools": WEATHER})


def test_inkling_reasoning_blocks_are_joined():
    inkling_parse(f"{THINK}one{END}{MODEL}{TEXT}mid{END}{MODEL}{THINK}two{END}", Expected("mid", "onetwo"))


def test_inkling_kind_marker_inside_text_is_dropped():
    inkling_parse(f"{TEXT}see {TEXT} token{END}", Expected("see  token"))


def test_inkling_text_then_call():  # the engine's streams by tokens and by characters, and the two-pass parser
    text = f"{TEXT}Check this.{END}{MODEL}" + call("get_weather", '{"city":"San Francisco"}')
    inkling_parse(text, Expected("Check this.", None, [("get_weather", '{"city":"San Francisco"}')]))
    inkling_parse(f"{TEXT}intro{END}{MODEL}" + call("f", "{}"), Expected("intro", None, [("f", "{}")]))


def test_inkling_reasoning_then_text():  # also the two-pass parser with a tool offered
    inkling_parse(f"{THINK}thinking...{END}{MODEL}{TEXT}answer{END}", Expected("answer", "thinking..."))
    inkling_parse(f"{THINK}plan{END}{MODEL}{TEXT}Let me look.{END}", Expected("Let me look.", "plan"),
                  request={"tools": WEATHER})


def test_inkling_marker_split_across_chunks():
    inkling_parse(f"{TEXT}hello{END}", Expected("hello"))


def test_inkling_prompt_seeded_modes():
    inkling_parse(f"abc{END}", Expected(None, "abc"), prompt=MODEL + THINK)
    inkling_parse(f"hello{END}", Expected("hello"), prompt=MODEL + TEXT)
    inkling_parse("plain answer", Expected("plain answer"), prompt=END + MODEL)


def test_inkling_reasoning_then_two_calls():
    text = f"{THINK}plan{END}{MODEL}" + call("f", '{"a":1}') + MODEL + call("g", '{"b":[2]}')
    inkling_parse(text, Expected(None, "plan", [("f", '{"a":1}'), ("g", '{"b":[2]}')]))


def test_inkling_reasoning_then_call():  # non-streaming and in chunks of 1, 3, 64 tokens
    inkling_parse(f"{THINK}think{END}{MODEL}" + call("f", '{"x":1}'), Expected(None, "think", [("f", '{"x":1}')]))
    inkling_parse(f"{THINK}plan{END}{MODEL}" + call("get_weather", '{"city":"SF"}'),
                  Expected(None, "plan", [("get_weather", '{"city":"SF"}')]))


def test_inkling_function_name_after_reasoning_is_not_content():
    name = "search_documents_by_keyword"
    tools = [{"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": {}}}}]
    inkling_parse(f"{THINK} context.{END}{MODEL}" + call(name, "{}"), Expected(None, " context.", [(name, "{}")]),
                  request={"tools": tools})


@pytest.mark.parametrize("kind", [TEXT, TEXT_CALL, ERROR])
def test_inkling_visible_block_then_call(kind):
    text = f"{kind}let me check{END}{MODEL}" + call("get_weather", '{"city":"SF"}')
    inkling_parse(text, Expected("let me check", None, [("get_weather", '{"city":"SF"}')]), request={"tools": WEATHER})


@pytest.mark.parametrize(("body", "name", "arguments"), [
    ('{"name":"get_weather","args":{"city":"SF"}}', "get_weather", {"city": "SF"}),
    ('{"name":"args","args":{"k":1}}', "args", {"k": 1}),
    ('{ "name" : "x" , "args" : {"a": 1} }', "x", {"a": 1}),
    ('{"name":"x"}', "x", {}),
])
def test_inkling_call_bodies(body, name, arguments):  # the peer's arg converter, restated as replies
    _, _, calls = decoded(inkling_parse(f"{name}{JSON_CALL}{body}{END}"))
    assert calls == [(name, arguments)]


def test_inkling_reasoning_token_counts():
    def count(text: str, prompt: str | None = None) -> int | None:
        parser = create_parser(tool_parser="inkling", reasoning_parser="inkling", request=None, prompt=prompt)
        chunks = pieces(text, INKLING_TOKENS)
        for i, chunk in enumerate(chunks):
            parser.stream_chunk(chunk, [1], final=i == len(chunks) - 1)
        return parser.reasoning_tokens

    assert count(f"{THINK}abc{END}") == 3
    assert count(f"abc{END}", prompt=MODEL + THINK) == 3
    assert count(f"hello{END}", prompt=MODEL + TEXT) == 0
    assert count(f"{THINK}abc{END}{MODEL}{TEXT}hello{END}") == 3


def test_header_written_parallel_calls_and_text_after():
    """The headerless cases with the header written: the same calls as without it."""
    text = call("a", "{}") + MODEL + call("b", '{"x":[1,2]}') + MODEL + f"{TEXT}after{END}"
    inkling_parse(text, Expected("after", None, [("a", "{}"), ("b", '{"x":[1,2]}')]))


def test_header_written_cut_off_call_is_kept():
    _, _, calls = inkling_parse(f'd{JSON_CALL}{{"name":"d","args":{{"k":"v"')
    assert [name for name, _ in calls] == ["d"]


# ---- inkling: tool blocks with no name header (the body's ``name`` names the call) -------------

def bare_call(name: str, args: str) -> str:
    """A tool block as vLLM's tests write it: the kind marker, the JSON body, no name header."""
    return f'{JSON_CALL}{{"name":"{name}","args":{args}}}{END}'


LOOKUP = [{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object", "properties": {}}}}]


@pytest.mark.parametrize("reasoning", [True, False])
def test_headerless_call_at_the_reply_start(reasoning: bool) -> None:
    """vLLM: ``test_adapter_round_trip``, ``test_tool_block_non_streaming`` / ``_streaming`` (no reasoning
    parser), ``test_tool_start_from_message_header_streaming`` (tools offered, content empty)."""
    expected = Expected(None, None, [("lookup", '{"term":"otter"}')])
    inkling_parse(bare_call("lookup", '{"term":"otter"}'), expected, reasoning=reasoning)
    inkling_parse(bare_call("lookup", '{"term":"otter"}'), expected, reasoning=reasoning,
                  request={"tools": LOOKUP}, prompt=END + MODEL)


def test_headerless_call_with_nested_arguments() -> None:  # vLLM: test_nested_args
    args = '{"filter":{"any":[{"tag":"x}y"}]},"limit":3}'
    inkling_parse(bare_call("search", args), Expected(None, None, [("search", args)]))


def test_headerless_call_arguments_are_the_args_object() -> None:  # vLLM: test_streamed_args_are_object_only
    content, _, calls = inkling_parse(bare_call("put", '{"n":7}'))
    assert content is None and calls == [("put", '{"n":7}')]


def test_headerless_parallel_calls() -> None:  # vLLM: test_parallel_tool_calls, _streaming, test_multi_tool_round_trip
    text = bare_call("first", '{"i":10}') + MODEL + bare_call("second", '{"j":[3,4]}')
    inkling_parse(text, Expected(None, None, [("first", '{"i":10}'), ("second", '{"j":[3,4]}')]))


def test_headerless_calls_then_a_text_block() -> None:  # vLLM: test_text_after_tool_call, test_tool_then_text, _two_tools_
    inkling_parse(bare_call("ping", "{}") + MODEL + f"{TEXT}sent{END}", Expected("sent", None, [("ping", "{}")]))
    text = bare_call("ping", "{}") + MODEL + bare_call("pong", "{}") + MODEL + f"{TEXT}both sent{END}"
    inkling_parse(text, Expected("both sent", None, [("ping", "{}"), ("pong", "{}")]))


def test_headerless_call_after_a_text_block_closed_without_opener() -> None:  # vLLM: test_content_state_tool_start_streaming
    text = f"{TEXT}One moment.{END}" + bare_call("lookup", '{"term":"heron"}')
    inkling_parse(text, Expected("One moment.", None, [("lookup", '{"term":"heron"}')]), request={"tools": LOOKUP})


def test_headerless_call_closed_by_end_of_sampling() -> None:  # vLLM: test_end_sampling_tool_closer_round_trips
    text = f'{JSON_CALL}{{"name":"stop","args":{{}}}}{END_SAMPLING}'
    inkling_parse(text, Expected(None, None, [("stop", "{}")]))


def test_headerless_call_cut_off_is_kept() -> None:  # vLLM: test_incomplete_tool_call_at_eos, test_incomplete_tool_at_eos
    _, _, calls = inkling_parse(f'{JSON_CALL}{{"name":"save","args":{{"path":"/tm')
    assert [name for name, _ in calls] == ["save"]


def test_headerless_call_name_streams_before_its_arguments() -> None:  # vLLM: test_name_streams_before_args_complete
    parser = create_parser(tool_parser="inkling", reasoning_parser="inkling", request=None)
    deltas = parser.stream_chunk(f'{JSON_CALL}{{"name":"fetch_page","', [1])
    names = [tc.function.name for delta, _ in deltas for tc in delta.tool_calls or [] if tc.function and tc.function.name]
    assert names == ["fetch_page"]


def test_headerless_kind_marker_in_prose_is_text() -> None:
    """Not a peer case: the body must be a named envelope, else the marker is text."""
    inkling_parse(f"{TEXT}the {JSON_CALL} token{END}", Expected(f"the {JSON_CALL} token"), request={"tools": LOOKUP})


# ---- inkling: the differences kept (see the module docstring) -----------------------------------

def test_kept_the_header_names_the_call() -> None:
    _, _, calls = inkling_parse(call("lookup", '{"term":"owl"}', header="find"))
    assert [name for name, _ in calls] == ["find"]


def test_kept_array_args_are_not_arguments() -> None:
    # Rule 6 (issue 23): arguments that are not an object break the JSON grammar; the named call
    # keeps ``{}`` and the array is a ``dropped`` record (until rule 6 it was forwarded as ``[2]``).
    _, _, calls = inkling_parse(call("lookup", "[2]"))
    assert calls == [("lookup", "{}")]
    parser = create_parser(tool_parser="inkling", reasoning_parser="inkling")
    parser.parse_complete(call("lookup", "[2]"))
    assert [(d.name, d.reason.split(":")[0], d.text) for d in parser.dropped] == [("lookup", "malformed", "[2]")]


def test_kept_tool_choice_none_leaves_the_markup_as_text() -> None:
    text = f"{TEXT}shown{END}{MODEL}" + call("lookup", '{"term":"elk"}')
    content, _, calls = inkling_parse(text, request={"tools": LOOKUP, "tool_choice": "none"})
    assert calls == [] and content is not None and content.startswith("shown") and JSON_CALL in content


def test_kept_thinking_without_a_reasoning_parser_is_content() -> None:
    content, reasoning, _ = inkling_parse(f"{THINK}idea{END}{MODEL}{TEXT}reply{END}", reasoning=False)
    assert reasoning is None and content is not None and content.startswith(f"{THINK}idea")
