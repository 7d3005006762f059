"""Harmony's framing table on its own: state x event -> steps, next state (as h11's test_state).

The Framer runs here against a recording stand-in for a path's ``Messages`` and the real
router, so these tests need neither openai-harmony nor a vocabulary.
"""

from __future__ import annotations

import pytest

from lmparse.messages import deltas_of
from lmparse.request import ParserRequest
from lmparse.response.harmony.framing import FRAMING, Event, Framer, Framing, text_events
from lmparse.response.harmony.router import Router

from .support.stream import folded

OPENING, HEADER, BODY, BETWEEN = Framing.OPENING, Framing.HEADER, Framing.BODY, Framing.BETWEEN


class Recorder:
    """A path's Messages that records what the framer asks of it; headers are text."""

    verbatim_bodies = False  # every body_text call is recorded

    def __init__(self, verdict=("final", None)) -> None:
        self.calls: list[tuple] = []
        self.verdict = verdict
        self.header = ""

    def open_header(self, role_known):
        self.calls.append(("open_header", role_known))
        self.header = ""

    def add_header(self, payload):
        self.calls.append(("add_header", payload))
        self.header += payload

    def close_header(self):
        self.calls.append(("close_header",))
        return self.verdict

    def drop_header(self):
        self.calls.append(("drop_header",))
        header, self.header = self.header, ""
        return header

    def open_body(self):
        self.calls.append(("open_body",))

    def body_text(self, payload, reasoning):
        self.calls.append(("body_text", payload))
        return payload

    def end_body(self, stop):
        self.calls.append(("end_body", stop))
        return ""


# An event sequence from OPENING to each state.
REACH = {
    OPENING: [], HEADER: [(Event.START, "<|start|>")], BODY: [(Event.TEXT, "x")], BETWEEN: [(Event.STOP, "<|end|>")],
}


class Events(list):
    """The events a chunk produced, folded as the deltas the edge makes of them."""

    def folded(self) -> tuple:
        return folded(deltas_of(self))


def framer_in(state: Framing, verdict=("final", None)):
    messages = Recorder(verdict)
    router = Router(ParserRequest.accept_all())
    framer = Framer(router, messages)
    out = Events()
    for event, payload in REACH[state]:
        framer.handle(event, payload, out)
    assert framer.state is state
    messages.calls.clear()
    return framer, messages, out


def test_every_state_handles_every_event():
    for state, row in FRAMING.items():
        expected = set(Event) if state is OPENING else set(Event) - {Event.RECIPIENT}
        assert set(row) == expected, state  # lexers send RECIPIENT only before the first message
    assert set(FRAMING) == set(Framing)


def test_every_step_is_a_framer_method():
    steps = {step for row in FRAMING.values() for steps, _ in row.values() for step in steps}
    assert all(callable(getattr(Framer, step, None)) for step in steps), steps


def test_markers_that_are_text_inside_a_header_and_a_body():
    assert text_events(HEADER) == {Event.TEXT, Event.CHANNEL, Event.CONSTRAIN}
    assert text_events(BODY) == {Event.TEXT, Event.MESSAGE, Event.CONSTRAIN}


def test_eos_always_leaves_the_framer_between_messages():
    assert {row[Event.EOS][1] for row in FRAMING.values()} == {BETWEEN}


@pytest.mark.parametrize("state", [OPENING, BETWEEN])
def test_a_stray_stop_outside_a_message_is_syntax(state):
    framer, messages, out = framer_in(state)
    framer.handle(Event.STOP, "<|end|>", out)
    assert framer.state is BETWEEN and messages.calls == [] and out == []


@pytest.mark.parametrize("state", [OPENING, BETWEEN])
def test_text_outside_a_message_opens_a_plain_content_body(state):
    framer, messages, out = framer_in(state)
    framer.handle(Event.TEXT, "hi", out)
    assert framer.state is BODY and messages.calls == [("open_body",), ("body_text", "hi")]
    assert out.folded() == ("hi", None, [])


@pytest.mark.parametrize("state", [OPENING, BETWEEN])
def test_message_marker_outside_a_message_completes_an_empty_assistant_header(state):
    framer, messages, out = framer_in(state)
    framer.handle(Event.MESSAGE, "<|message|>", out)
    assert framer.state is BODY
    assert messages.calls == [("open_header", True), ("close_header",)]


def test_the_reply_may_open_with_its_recipient():
    framer, messages, out = framer_in(OPENING)
    framer.handle(Event.RECIPIENT, " to=", out)
    assert framer.state is HEADER and messages.calls == [("open_header", True), ("add_header", " to=")]


@pytest.mark.parametrize("state,cut", [(OPENING, []), (BODY, [("end_body", None)]), (BETWEEN, [])])
def test_start_opens_a_header_whose_role_is_unknown(state, cut):
    framer, messages, out = framer_in(state)
    framer.handle(Event.START, "<|start|>", out)
    assert framer.state is HEADER and messages.calls == cut + [("open_header", False)]


def test_channel_in_a_body_ends_it_and_starts_the_next_header():
    framer, messages, out = framer_in(BODY)
    framer.handle(Event.CHANNEL, "<|channel|>", out)
    assert framer.state is HEADER
    assert messages.calls == [("end_body", None), ("open_header", True), ("add_header", "<|channel|>")]


@pytest.mark.parametrize("event", [Event.TEXT, Event.CHANNEL, Event.CONSTRAIN])
def test_text_and_channel_markers_extend_a_header(event):
    framer, messages, out = framer_in(HEADER)
    framer.handle(event, "w", out)
    assert framer.state is HEADER and messages.calls == [("add_header", "w")]


@pytest.mark.parametrize("event", [Event.TEXT, Event.MESSAGE, Event.CONSTRAIN])
def test_text_and_message_markers_extend_a_body(event):
    framer, messages, out = framer_in(BODY)
    framer.handle(event, "w", out)
    assert framer.state is BODY and messages.calls == [("body_text", "w")]


def test_a_completed_header_routes_its_body():
    framer, messages, out = framer_in(HEADER, verdict=("analysis", None))
    framer.handle(Event.MESSAGE, "<|message|>", out)
    assert (framer.state, framer.channel, framer.recipient) == (BODY, "analysis", None)
    framer.handle(Event.TEXT, "think", out)
    framer.handle(Event.STOP, "<|end|>", out)
    assert (framer.state, framer.channel) == (BETWEEN, None)
    assert messages.calls[-1] == ("end_body", "<|end|>")
    assert out.folded() == (None, "think", [])


def test_a_rejected_header_is_content():
    framer, messages, out = framer_in(HEADER, verdict="bogus header")
    framer.handle(Event.MESSAGE, "<|message|>", out)
    framer.handle(Event.TEXT, "body", out)
    assert framer.state is BODY and out.folded() == ("bogus headerbody", None, [])


@pytest.mark.parametrize("event,after", [(Event.STOP, BETWEEN), (Event.START, HEADER)])
def test_a_header_that_never_completes_goes_back_as_content(event, after):
    framer, messages, out = framer_in(OPENING)
    framer.handle(Event.CHANNEL, "<|channel|>", out)
    framer.handle(Event.TEXT, "final", out)
    framer.handle(event, None, out)
    assert framer.state is after and out.folded() == ("<|channel|>final", None, [])


def test_a_header_cut_off_by_the_end_of_the_reply_is_dropped_syntax():
    framer, messages, out = framer_in(OPENING)
    framer.handle(Event.CHANNEL, "<|channel|>", out)
    framer.handle(Event.TEXT, "analysis", out)
    framer.handle(Event.EOS, None, out)
    assert framer.state is BETWEEN and out.folded() == (None, None, [])
    assert [(d.text, d.reason) for d in framer._router.dropped] == [
        ("<|channel|>analysis", "truncated: the reply ended inside a message header")]


def test_a_body_cut_off_by_eos_is_ended_without_a_stop():
    framer, messages, out = framer_in(BODY)
    framer.handle(Event.EOS, None, out)
    assert framer.state is BETWEEN and messages.calls == [("end_body", None)]
