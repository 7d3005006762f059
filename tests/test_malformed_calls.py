"""Issue 23, rule 6, over every wire: a malformed call never yields arguments that are not a
JSON object, and no character of the reply comes out twice (in a channel, a call, or a
``dropped`` record's markup).  Near-valid replies (a wire's own rendering with spans deleted,
repeated, cut off or spliced with other families' syntax) at whole, per-character and random
chunkings; the derandomized profile of conftest makes the examples the same every run."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .support.stream import check_invariants, feed, folded, random_chunks
from .support.wires import ALL_WIRES, Wire
from .test_fuzz_all_parsers import _mutate

ARGUMENTS = ('{"city": "x y", "days": 2}', "{}", '{"city": "<\\"q\\">"}', '{"i": 3, "s": "a, b", "b": true}')
NAMES = ("get_weather", "f", "typed", "zzz")  # zzz: not offered, so dropped


def check_rule6(wire: Wire, text: str, chunkings: list[list[str]]) -> None:
    request = wire.request()
    for chunks in chunkings:
        parser = wire.parser(request)
        deltas = feed(parser, chunks)
        # Conservation, with the markup the drop records keep: nothing appears twice.
        check_invariants(deltas, text, [d.text for d in parser.dropped if d.text])
        for name, arguments in folded(deltas)[2]:
            try:
                value = json.loads(arguments, strict=False)  # (a raw control character in a string: issue 23 rule 6 leaves it as written)
            except ValueError:
                raise AssertionError(f"call {name}'s arguments are not JSON: {arguments!r} ({chunks!r})") from None
            assert isinstance(value, dict), f"call {name}'s arguments are not an object: {arguments!r}"


def reply(wire: Wire, rng: random.Random) -> str:
    calls = [(rng.choice(NAMES), rng.choice(ARGUMENTS)) for _ in range(rng.randint(1, 3))]
    return wire.plain + "Sure.\n" + wire.calls(*calls) + "\nDone."


@pytest.mark.parametrize("wire", ALL_WIRES, ids=[w.id for w in ALL_WIRES])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**6))
def test_mutated_calls_stay_json(wire: Wire, seed: int) -> None:
    rng = random.Random(seed)
    text = _mutate(reply(wire, rng), rng)
    check_rule6(wire, text, [[text], list(text), random_chunks(text, rng, 7)])


# What the property once found, kept as plain cases: (wire id, reply).
FOUND = [
    # A key cut off by the end (llama3, seed 1): the arguments were ``{"cit``; now ``{}``,
    # and the held ``"cit`` is the call's markup cut off (a ``dropped`` record).
    ("llama3", 'Sure.\n<|python_tag|>{"name": "get_weather", "parameters": {"cit'),
    # A string value cut off (kimi-k2, seed 1): closed with its quote and brace.
    ("kimi-k2", '</think>Sure.\n<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0'
                '<|tool_call_argument_begin|>{"city": "<\\"q'),
    # Arguments that open a string, not an object (gigachat3, seed 976): the call carries {}.
    ("gigachat3", '<think></think>Sure.\n<|function_call|>{"name": "f", "arguments": "'),
    # An invalid escape (``\\:``) inside a string value (deepseek-v31, seed 980): the whole
    # reply gave ``{"city": ""}`` and a per-character one streamed the rest through the fast
    # lane (``{"city": "<g{q>"}``): the lane now asks the guard (``CallEmitter.try_run``).
    ("deepseek-v31", '</think>Sure.\n<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>typed<｜tool▁sep｜>{}<｜tool▁call▁end｜>'
                     '<｜tool▁calls▁end｜><｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>'
                     '{"city": "<\\:g{"q\\">"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>\nDone.'),
    # A marker spliced after an escape's backslash (mistral, seed 14366).
    ("mistral", 'Sure.\n[TOOL_CALLS]get_weather[ARGS]{"city": "<\\<|tools_suffix|>"q\\">"}[TOOL_CALLS]zzz[ARGS]'
                '{"i": 3, "s": "a, b", "b": true}[TOOL_CALLS]f[ARGS]{"i": 3, "s": "a, b", "b": true}\nDone.'),
    # A scalar cut short by a marker (internlm, seed 0: ``"b": t`` then ``<|``): closed, the
    # ``t`` is the call's markup.
    ("internlm", '</think>Sure.\n<|action_start|><|plugin|>\n{"name": "typed", "parameters": {"i": 3, "s": "a, b", '
                 '"b": t<|action_end|>\nDone.'),
    # A number then markup (tests/test_fuzz_all_parsers.py mistral seed 240): ``2}`` closes
    # it; the checker saw the closed arguments written later in the reply and took those.
    ("mistral", 'Sure.\n[TOOL_CALLS]f[ARGS]{"a": "x y", "b": 2<param name="a">}[TOOL_CAa">}[TOOL_CALLS]g[ARGS'
                '<function=f>]{"a": "x y", "b": 2}[TOOL_CALLS]h[ARGS]{"c": null, "a": "<\\"q\\">"}\nDone.'),
    # A closing fence with more text after it (deepseek-v3, seed 2447): it was taken as the
    # fence before the call's end, so the dropped markup skipped it; it is text there.
    ("deepseek-v3", '</think>Sure.\n<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n'
                    'function<｜tool▁sep｜>typed\n```json\n{"city": "<\\"q\\">"}\n```<｜tool▁call▁end｜>'
                    '<｜tool▁calls▁end｜>\nDone.'),
]
WIRES = {w.id: w for w in ALL_WIRES}


@pytest.mark.parametrize("wire_id,text", FOUND, ids=[f"{w}-{i}" for i, (w, _) in enumerate(FOUND)])
def test_found_inputs(wire_id: str, text: str) -> None:
    wire = WIRES[wire_id]
    check_rule6(wire, text, [[text], list(text), random_chunks(text, random.Random(0), 7)])
    whole = folded(feed(wire.parser(wire.request()), [text]))
    for chunks in (list(text), random_chunks(text, random.Random(1), 5)):
        assert folded(feed(wire.parser(wire.request()), chunks)) == whole, chunks
