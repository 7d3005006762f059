"""``JsonGuard.end_value`` (rule 6, issue 23): a bare scalar held because more of it could
follow goes out when the dialect says the value is whole, and never before."""

from lmparse.tools.json_guard import JsonGuard


def test_a_scalar_is_held_until_it_ends_then_released_whole_with_its_key() -> None:
    guard = JsonGuard()
    assert guard.feed('{"days": 1') == ("{", "")
    assert guard.feed("0") == ("", "")
    assert guard.end_value() == '"days": 10'
    assert guard.feed(', "a": 1') == ("", "")  # (a key and a scalar held again)
    assert guard.close() == (', "a": 1}', "")


def test_end_value_releases_nothing_that_is_not_a_whole_scalar() -> None:
    for text in ('{"days": 1.', '{"days": tru', '{"days": ', '{"days": "1'):
        guard = JsonGuard()
        guard.feed(text)
        assert guard.end_value() == "", text
