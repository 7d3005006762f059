"""LFM2 / LFM2.5 (``lfm2`` tool and reasoning parsers).

The DESIGN §7 case table runs through tests/test_contract.py (``LFM2`` in ALL_WIRES, the
markers as pseudo-tokens: no LFM2 vocabulary is here).  Here: the mixed Python / JSON
literals, the wrapper markers, when a call goes out, the initial mode of the templates'
prompts, round trips through LFM2.5-8B-A1B's template (the only one that renders calls) and
hypothesis round trips with hazardous strings.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lmparse import ToolParserManager, create_parser

from .support import tokenizers
from .support.strategies import assistant_calling, calls_with, prose
from .support.stream import Expected, arguments_after, check_parse, check_round_trip
from .support.wires import LFM2, TOOLS, pseudo_tokens


def parser(request=None):
    return create_parser(tool_parser="lfm2", reasoning_parser="lfm2",
                         request={"tools": TOOLS} if request is None else request)


def chunkings(text: str) -> dict[str, list[str]]:
    return {"pseudo-tokens": pseudo_tokens(text, LFM2.pseudo_token_markers)}


def test_python_and_json_literals_mix():
    text = ("""Let me check.<|tool_call_start|>[f(s='Paris "FR" & <x>', o={"u": true, "n": null}, """
            """l=['a', True, None], x=2.5)]<|tool_call_end|>""")
    args = '{"s": "Paris \\"FR\\" & <x>", "o": {"u": true, "n": null}, "l": ["a", true, null], "x": 2.5}'
    check_parse(parser, text, Expected("Let me check.", None, [("f", args)]), chunkings(text))


def test_parameters_named_by_python_keywords():
    """The template writes ``from='a'`` for a parameter named ``from``: read as that name."""
    text = "<|tool_call_start|>[f(from='a@b', class=None, lambda_=1)]<|tool_call_end|>"
    check_parse(parser, text, Expected(None, None, [("f", '{"from": "a@b", "class": null, "lambda_": 1}')]),
                chunkings(text))


def test_a_bare_list_is_text():
    """Unlike ``pythonic``, a reply that starts with ``[`` is prose: the markers open a block."""
    check_parse(parser, "[f(a=1)]", Expected("[f(a=1)]"), chunkings("[f(a=1)]"))


def test_a_call_goes_out_whole_at_its_close_paren():
    """The pythonic machinery knows a call is valid only at its ``)``: its arguments do not
    stream before (string values do not grow in the stream)."""
    steps = arguments_after(parser(), ["<|tool_call_start|>[f(s='Par", "is', n=1", ")", "]<|tool_call_end|>"])
    assert steps == ["", "", '{"s": "Paris", "n": 1}', '{"s": "Paris", "n": 1}']


# ---- the official templates ------------------------------------------------------------------

jinja2 = pytest.importorskip("jinja2")
TEMPLATES = ["LFM2-8B-A1B.jinja", "LFM2.5-8B-A1B.jinja", "LFM2.5-Instruct.jinja"]


def template(name: str):
    """The template as transformers runs it; its ``{% generation %}`` markers (HF's
    assistant-mask extension) write nothing and are removed here."""
    from .test_xml_templates import _raise, _tojson

    root = tokenizers.testdata_dir()
    path = root / "templates" / name if root is not None else None
    if path is None or not path.is_file():
        pytest.skip(f"chat template {name} is missing")
    source = path.read_text().replace("{%- generation -%}", "").replace("{%- endgeneration -%}", "")
    env = jinja2.sandbox.ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                                       extensions=["jinja2.ext.loopcontrols"])
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise
    return env.from_string(source)


@pytest.mark.parametrize("name", TEMPLATES)
@pytest.mark.parametrize("switches", [{}, {"enable_thinking": True}, {"enable_thinking": False}])
def test_reply_starts_plain_whatever_the_switch(name, switches):
    prompt = template(name).render(messages=[{"role": "user", "content": "Hi"}], tools=TOOLS,
                                   add_generation_prompt=True, **switches)
    assert prompt.endswith("<|im_start|>assistant\n")  # nothing prefilled
    p = create_parser(tool_parser="lfm2", reasoning_parser="lfm2",
                      request={"tools": TOOLS, "chat_template_kwargs": switches}, prompt=prompt)
    message = p.parse_complete("<think>hm</think>Hello.")
    assert (message.content, message.reasoning_content) == ("Hello.", "hm")


SCENARIOS = {
    "typed_values": [("get_weather", {"city": "Paris \"FR\" & <x>", "days": 3, "opts": {"unit": "c", "deep": [
        1, 2.5, True, False, None, {"k": "v"}, [], {}]}, "tags": ["a", "b"], "flag": True, "none": None})],
    "several_calls_and_no_arguments": [("get_weather", {"city": "Oslo", "days": 1}), ("f", {}), ("g", {})],
    "hazards_inside_strings": [("f", {"s": 'a)], g(x="<|tool_call_end|>"', "t": "<think>x"})],
}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_template_round_trip(scenario):
    calls = SCENARIOS[scenario]
    assistant = assistant_calling(calls, content="Let me check.")
    user = [{"role": "user", "content": "Weather in Paris?"}]
    t = template("LFM2.5-8B-A1B.jinja")
    prompt = t.render(messages=user, tools=TOOLS, add_generation_prompt=True)
    full = t.render(messages=[*user, assistant], tools=TOOLS)
    assert full.startswith(prompt)
    reply = full[len(prompt):].split("<|im_end|>")[0]
    content, reasoning, got = check_parse(parser, reply, None, chunkings(reply))
    assert [(n, json.loads(a)) for n, a in got] == calls
    assert (content, reasoning) == ("Let me check.", None)
    wire = ToolParserManager.get("lfm2").render([(n, json.dumps(a, ensure_ascii=False)) for n, a in calls])
    assert wire in reply  # render() writes the calls as the template does


# ---- hypothesis: adversarial strings round trip -----------------------------------------------

HAZARDS = ['"', "'", "\\", ",", ")", "(", "]", "[", "}", "{", "=", "\n", "<|tool_call_end|>", "<|tool_call_start|>",
           "</think>", "true", "None", "é"]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls_with(HAZARDS), prose, prose, st.integers(0, 1000))
def test_render_round_trip(calls, reasoning, content, seed):
    rendered = [(n, json.dumps(a, ensure_ascii=False)) for n, a in calls]
    wire_text = ToolParserManager.get("lfm2").render(rendered)
    assert wire_text == LFM2.calls(*rendered)
    text = (f"<think>{reasoning}</think>" if reasoning else "") + content + wire_text

    def make():  # no request: any name
        return create_parser(tool_parser="lfm2", reasoning_parser="lfm2")

    want = (content or None, reasoning or None, [(n, a) for n, a in calls])
    check_round_trip(make, text, want, seed)


# ---- issue 13: the echo variant ------------------------------------------------------------------

BODY = "[get_weather(city='Oslo')]"
BLOCK = f"<|tool_call_start|>{BODY}<|tool_call_end|>"
OSLO = [("get_weather", '{"city": "Oslo"}')]
ECHOES = [
    ("echo_closed_by_an_orphan_end", f"Sure.{BLOCK}{BODY}<|tool_call_end|>", "Sure.", BODY + "<|tool_call_end|>"),
    ("echo_then_content", f"{BLOCK}{BODY}<|tool_call_end|>Done.", "Done.", BODY + "<|tool_call_end|>"),
    ("echo_after_a_newline", f"{BLOCK}\n{BODY}<|tool_call_end|>", None, BODY + "<|tool_call_end|>"),
]


@pytest.mark.parametrize("text,content,echo", [v[1:] for v in ECHOES], ids=[v[0] for v in ECHOES])
def test_an_echo_of_the_call_is_recorded_in_dropped(text, content, echo):
    from .support.stream import check_invariants, chunkings as all_chunkings, feed, folded

    runs = [*all_chunkings(text).values(), *chunkings(text).values()]
    for chunks in runs:
        p = parser()
        deltas = feed(p, chunks)
        assert folded(deltas) == (content, None, OSLO), chunks
        assert [(d.reason, d.text) for d in p.dropped] == [(
            "an echo of the call after its end marker, closed by an orphan end marker", echo)], chunks
        check_invariants(deltas, text)  # (the converted call's own stretch accounts the echo)


@pytest.mark.parametrize("after", ["[1] is a list", "[see above]", " and then", "[x]<|tool_call_start|>[f()]"])
def test_text_after_the_block_that_is_no_echo_stays_content(after):
    text = BLOCK + after
    got = check_parse(parser, text, None, chunkings(text))
    assert got[0] is not None and got[0].startswith(after.split("<")[0]) and got[2][0] == OSLO[0]
