"""The delta classes' shortcut constructor builds what their ``__init__``s build."""

from __future__ import annotations

from lmparse.messages import DeltaFunctionCall, DeltaMessage, DeltaToolCall, arguments_delta


def _slots(obj: object) -> dict[str, object]:
    # getattr raises AttributeError for a slot the shortcut left unset.  (A compiled class has
    # no ``__slots__``: its attributes are its data descriptors.)
    cls = type(obj)
    names = getattr(cls, "__slots__", None) or [n for n, v in vars(cls).items() if hasattr(v, "__set__")]
    return {name: getattr(obj, name) for name in names}


def test_arguments_delta_sets_every_slot_as_the_constructors_do() -> None:
    built = arguments_delta(3, '{"a": ')
    expected = DeltaMessage(None, None, [DeltaToolCall(3, None, None, DeltaFunctionCall(None, '{"a": '))])
    assert built.to_dict() == expected.to_dict() == {"tool_calls": [{"index": 3, "function": {"arguments": '{"a": '}}]}
    assert {k: v for k, v in _slots(built).items() if k != "tool_calls"} == {"content": None, "reasoning_content": None}
    (call,) = built.tool_calls or []
    assert {k: v for k, v in _slots(call).items() if k != "function"} == {"index": 3, "id": None, "type": None}
    assert _slots(call.function) == {"name": None, "arguments": '{"a": '}


def test_arguments_delta_objects_are_fresh_and_mutable() -> None:
    a, b = arguments_delta(0, "x"), arguments_delta(0, "x")
    assert a is not b and a.tool_calls is not b.tool_calls
    fn = a.tool_calls[0].function  # type: ignore[index]
    assert fn is not None
    fn.arguments = (fn.arguments or "") + "y"  # the call tracker merges a chunk's fragments like this
    assert a.to_dict()["tool_calls"][0]["function"]["arguments"] == "xy"
    assert b.to_dict()["tool_calls"][0]["function"]["arguments"] == "x"
