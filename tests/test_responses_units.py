"""The Responses API's parts without a server: input items to chat turns, the tool map,
the byte-bounded store, the custom-input decoder, and the signer behind replayed reasoning."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("orjson")
pytest.importorskip("starlette")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from lmparse.serve.errors import RequestError  # noqa: E402
from lmparse.serve.responses import ResponseStore, parse_request  # noqa: E402
from lmparse.serve.responses.custom_input import CustomInput, final_input  # noqa: E402
from lmparse.serve.signing import Signer  # noqa: E402

SIGNER = Signer("test-key")
FN = {"type": "function", "name": "get_weather", "parameters": {"type": "object", "properties": {
    "city": {"type": "string"}}}}


def convert(body: dict, store: ResponseStore | None = None):
    return parse_request({"model": "m", **body}, "m", SIGNER, store)


def test_assistant_side_items_in_a_row_fold_into_one_turn():
    request, opts = convert({"instructions": "Be brief.", "tools": [FN], "input": [
        {"role": "developer", "content": "house rules"},
        {"role": "user", "content": [{"type": "input_text", "text": "weather?"}]},
        {"type": "reasoning", "id": "rs_1", "summary": [], "content": [{"type": "reasoning_text", "text": "think"}]},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Checking."}]},
        {"type": "function_call", "call_id": "c1", "name": "get_weather", "arguments": '{"city": "Oslo"}'},
        {"type": "function_call_output", "call_id": "c1", "output": "cold"},
    ]})
    assert request.messages == [
        {"role": "system", "content": "Be brief."},
        {"role": "system", "content": "house rules"},
        {"role": "user", "content": "weather?"},
        {"role": "assistant", "content": "Checking.", "reasoning_content": "think", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "cold"},
    ]
    assert opts.new_messages == request.messages[1:]  # instructions are not part of the stored turns


def test_reasoning_is_read_from_a_blob_lmparse_sealed_and_not_from_anyone_elses():
    def reasoning_of(item: dict) -> str | None:
        request, _ = convert({"input": [{"role": "user", "content": "q"}, item]})
        return request.messages[-1].get("reasoning_content")

    sealed = SIGNER.seal_reasoning("my private thoughts")
    assert reasoning_of({"type": "reasoning", "summary": [], "encrypted_content": sealed}) == "my private thoughts"
    assert reasoning_of({"type": "reasoning", "summary": [], "encrypted_content": Signer("other").seal_reasoning(
        "forged")}) is None
    tampered = sealed[:-3] + ("AAA" if not sealed.endswith("AAA") else "BBB")
    assert reasoning_of({"type": "reasoning", "summary": [], "encrypted_content": tampered}) is None
    assert reasoning_of({"type": "reasoning", "summary": [{"type": "summary_text", "text": "gist"}],
                         "encrypted_content": "gAAAA-openai"}) == "gist"


def test_thinking_signatures_verify_only_for_the_same_text_and_key():
    signature = SIGNER.thinking_signature("reasoned")
    assert SIGNER.verify_thinking("reasoned", signature)
    assert not SIGNER.verify_thinking("reasoned!", signature)
    assert not Signer("other").verify_thinking("reasoned", signature)
    assert not SIGNER.verify_thinking("reasoned", None) and not SIGNER.verify_thinking("reasoned", "EqQBCkYIBxgC")


def test_namespace_and_custom_tools_are_offered_as_flat_functions():
    request, opts = convert({"input": "x", "tools": [
        {"type": "namespace", "name": "crm", "description": "d", "tools": [FN]},
        {"type": "custom", "name": "apply_patch", "description": "Patch files"},
        {"type": "web_search"}, {"type": "image_generation"},
    ]})
    names = [t["function"]["name"] for t in request.tools]
    assert names == ["crm__get_weather", "apply_patch"]
    patch = request.tools[1]["function"]["parameters"]
    assert patch["required"] == ["input"] and patch["properties"]["input"]["type"] == "string"
    assert opts.tools.client("crm__get_weather") == ("function", "get_weather", "crm")
    assert opts.tools.client("apply_patch") == ("custom", "apply_patch", None)
    assert opts.ignored_tools == ["web_search", "image_generation"]


def test_history_calls_use_the_flat_names_the_model_sees():
    request, _ = convert({"tools": [{"type": "namespace", "name": "crm", "description": "d", "tools": [FN]},
                                    {"type": "custom", "name": "apply_patch"}], "input": [
        {"role": "user", "content": "x"},
        {"type": "function_call", "call_id": "a", "name": "get_weather", "namespace": "crm", "arguments": "{}"},
        {"type": "custom_tool_call", "call_id": "b", "name": "apply_patch", "input": 'line "1"\n'},
    ]})
    calls = request.messages[-1]["tool_calls"]
    assert [c["function"]["name"] for c in calls] == ["crm__get_weather", "apply_patch"]
    assert json.loads(calls[1]["function"]["arguments"]) == {"input": 'line "1"\n'}


def test_hosted_tool_items_in_history_are_left_out():
    request, _ = convert({"input": [{"role": "user", "content": "x"},
                                    {"type": "web_search_call", "id": "ws_1", "status": "completed"},
                                    {"type": "message", "role": "assistant", "content": "done"}]})
    assert request.messages == [{"role": "user", "content": "x"}, {"role": "assistant", "content": "done"}]


def test_effort_none_turns_thinking_off_and_other_efforts_on():
    assert convert({"input": "x", "reasoning": {"effort": "none"}})[0].thinking is False
    request, _ = convert({"input": "x", "reasoning": {"effort": "high"}})
    assert request.thinking is True and request.reasoning_effort == "high"
    assert convert({"input": "x", "reasoning": {"summary": "auto"}})[0].thinking is None


def test_the_store_keeps_a_chain_and_forgets_least_recently_used_first():
    store = ResponseStore(max_bytes=4000)
    turn = [{"role": "user", "content": "x" * 300}]
    store.put("r1", None, turn, {"id": "r1", "output": [{"id": "msg_1", "type": "message"}]})
    store.put("r2", "r1", turn, {"id": "r2", "output": []})
    assert len(store.conversation("r2")) == 2 and store.item("msg_1")["type"] == "message"
    for i in range(3, 12):
        store.put(f"r{i}", None, turn, {"id": f"r{i}", "output": []})
        store.conversation("r2")  # in use: its chain stays
    assert store.bytes <= 4000
    assert store.get("r1") is not None and store.get("r3") is None
    store.delete("r1")
    with pytest.raises(KeyError) as info:
        store.conversation("r2")
    assert info.value.args[0] == "r1"
    assert store.item("msg_1") is None


def test_a_missing_ancestor_is_a_400_naming_it():
    store = ResponseStore()
    store.put("r2", "r1", [], {"id": "r2", "output": []})
    with pytest.raises(RequestError) as info:
        convert({"input": "x", "previous_response_id": "r2"}, store)
    assert info.value.param == "previous_response_id" and "'r1'" in info.value.message


def test_item_reference_resolves_a_stored_item():
    store = ResponseStore()
    store.put("r1", None, [], {"id": "r1", "output": [
        {"id": "fc_1", "type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"}]})
    request, _ = convert({"input": [{"role": "user", "content": "x"}, {"type": "item_reference", "id": "fc_1"}]},
                         store)
    assert request.messages[-1]["tool_calls"][0]["id"] == "c1"
    with pytest.raises(RequestError):
        convert({"input": [{"type": "item_reference", "id": "fc_nope"}]}, store)


# ---- the custom-input decoder -------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(st.text(), st.booleans(), st.randoms(use_true_random=False))
def test_custom_input_decodes_the_same_in_any_chunking(value, ascii_only, rnd):
    arguments = json.dumps({"input": value}, ensure_ascii=ascii_only)
    cuts = sorted(rnd.sample(range(1, len(arguments)), min(len(arguments) - 1, rnd.randint(0, 8))))
    pieces = [arguments[i:j] for i, j in zip([0, *cuts], [*cuts, len(arguments)], strict=True)]
    decoder = CustomInput()
    streamed = "".join(decoder.feed(piece) for piece in pieces)
    expected = value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    assert streamed == expected
    assert final_input(arguments, decoder) == value


def test_custom_input_that_is_not_a_string_is_given_whole_at_the_end():
    decoder = CustomInput()
    assert decoder.feed('{"input": {"a": 1}}') == ""
    assert final_input('{"input": {"a": 1}}', decoder) == '{"a": 1}'
    assert final_input('{"path": "x", "diff": "y"}', CustomInput()) == '{"path": "x", "diff": "y"}'
    truncated = CustomInput()
    truncated.feed('{"input": "half a li')
    assert final_input('{"input": "half a li', truncated) == "half a li"


def test_custom_input_holds_only_a_cut_escape():
    decoder = CustomInput()
    assert decoder.feed('{"input": "a\\') == "a"
    assert decoder.feed('u00e9') == "é"
    assert decoder.feed('\\ud83d') == ""  # half a surrogate pair waits for its low half
    assert decoder.feed('\\ude00!"}') == "😀!"
