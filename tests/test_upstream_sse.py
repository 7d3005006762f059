"""``SSELineDecoder``: an upstream body's bytes in, complete JSON events out, whatever the cuts."""

from __future__ import annotations

import pytest

pytest.importorskip("orjson")

from lmparse.serve.engines.sse import SSELineDecoder, error_text  # noqa: E402


def fed(*pieces: bytes | str) -> tuple[list[dict], SSELineDecoder]:
    lines = SSELineDecoder()
    events = [event for piece in pieces for event in lines.decode(piece)]
    return events + lines.flush(), lines


def test_an_event_is_returned_by_the_read_that_completes_its_line() -> None:
    lines = SSELineDecoder()
    assert lines.decode(b'data: {"a"') == []
    assert lines.decode(b": 1}") == []
    assert lines.decode(b"\n") == [{"a": 1}]


def test_half_a_utf8_character_waits_for_its_other_half() -> None:
    data = 'data: {"t": "é😀"}\n'.encode()
    cut = data.index("😀".encode()) + 2
    assert fed(data[:cut], data[cut:])[0] == [{"t": "é😀"}]


@pytest.mark.parametrize("ending", [b"\n", b"\r\n", b"\r"])
def test_every_line_ending_and_a_crlf_split_between_reads(ending: bytes) -> None:
    data = b'data: {"n": 1}' + ending + ending + b'data: {"n": 2}' + ending
    for cut in range(len(data) + 1):
        assert fed(data[:cut], data[cut:])[0] == [{"n": 1}, {"n": 2}], cut


def test_only_cr_and_lf_end_a_line() -> None:
    assert fed('data: {"t": "a\u2028b\u2029c\x85"}\n'.encode())[0] == [{"t": "a\u2028b\u2029c\x85"}]


def test_comments_and_other_fields_are_skipped_bare_json_lines_kept() -> None:
    events, lines = fed(b': keep-alive\nevent: message\nid: 7\nretry: 10\n\n{"bare": true}\ndata:{"tight": 1}\n'
                        b"data: [1, 2]\n")
    assert events == [{"bare": True}, {"tight": 1}] and not lines.done  # a JSON array is no event


def test_done_ends_the_stream_and_what_follows_is_ignored() -> None:
    events, lines = fed(b'data: {"n": 1}\n\ndata: [DONE]\n\ndata: {"n": 2}\n\n', b'data: {"n": 3}\n')
    assert events == [{"n": 1}] and lines.done and lines.error is None


def test_a_last_line_without_its_line_end_is_flushed() -> None:
    assert fed(b'data: {"n": 1}\n\ndata: {"n": 2}')[0] == [{"n": 1}, {"n": 2}]


@pytest.mark.parametrize("line, error", [
    (b'data: {"error": "engine crashed"}', "error: engine crashed"),
    (b'data: {"error": {"message": "CUDA out of memory", "code": 500}}', "error: CUDA out of memory"),
    (b'data: {"object": "error", "message": "bad prompt"}', "error: bad prompt"),
    (b'error: {"error": {"code": 500, "message": "slot gone", "type": "server_error"}}', "error: slot gone"),
    (b'error: {"code": 500}', "error: {'code': 500}"),
    (b'error: "plain"', "error: plain"),
    (b"data: <html>oops", "sent a line that is not JSON: '<html>oops'"),
])
def test_an_error_ends_the_stream_after_the_events_before_it(line: bytes, error: str) -> None:
    events, lines = fed(b'data: {"n": 1}\n' + line + b'\ndata: {"n": 2}\n')
    assert events == [{"n": 1}] and lines.done and lines.error == error


def test_error_text_reads_both_error_shapes() -> None:
    assert error_text({"error": {"message": "m"}}) == "m"
    assert error_text({"error": {"code": 1}}) == "{'code': 1}"
    assert error_text({"object": "error", "message": "m"}) == "m"
    assert error_text({"text": "fine"}) is None and error_text([1]) is None


def test_a_line_that_never_ends_fails_the_stream_instead_of_growing(monkeypatch: pytest.MonkeyPatch) -> None:
    from lmparse.serve.engines import sse

    monkeypatch.setattr(sse, "MAX_LINE", 1000)
    lines = SSELineDecoder()
    assert lines.decode(b'data: {"n": 1}\ndata: {"text": "') == [{"n": 1}]
    for _ in range(20):
        assert lines.decode(b"x" * 100) == []
    assert lines.done and lines.error == "sent a line longer than 1000 characters"
    assert lines.decode(b'"}\ndata: {"n": 2}\n') == []  # nothing after the failure
