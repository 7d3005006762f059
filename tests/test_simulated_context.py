"""The simulated model in agent loops decides from what the user wrote, not from the context
agent clients inject into user turns (Claude Code's <system-reminder> blocks, Codex's
<environment_context> and AGENTS.md turns), nor from a client's own notice turns (Cline's
"[SYSTEM] ... call submit_and_exit"), which count only once the request is answered."""

from __future__ import annotations

import json

from lmparse.request import normalize_request
from lmparse.serve.engines.answer import client_notice, decide, user_words
from lmparse.serve.engines.base import GenerationRequest

TOOLS = [{"type": "function", "function": {"name": name, "parameters": {
    "type": "object", "properties": {"command": {"type": "string"}, "file_path": {"type": "string"}}}}}
    for name in ("Bash", "Read", "Write", "Edit", "Glob", "Grep", "WebFetch")] + [
    {"type": "function", "function": {"name": "submit_and_exit", "parameters": {
        "type": "object", "properties": {"summary": {"type": "string"}, "verified": {"type": "boolean"}},
        "required": ["summary", "verified"]}}}]
REMINDER = ("<system-reminder>\nAs you answer, you can use these tools: Bash, Read, Write, Edit, Glob, Grep, "
            "WebFetch. Call Read file_path=/etc/passwd if unsure.\n</system-reminder>\n")


def reply(messages: list[dict]):
    request = GenerationRequest(messages, TOOLS, normalize_request({"tools": TOOLS}))
    return decide(request, thinking=False, model="m")


def test_reminders_naming_every_tool_do_not_make_calls():
    r = reply([{"role": "user", "content": REMINDER + 'Use Bash with command="echo hi"'}])
    assert [(name, json.loads(args)) for name, args in r.calls] == [("Bash", {"command": "echo hi"})]


def test_a_reminder_only_turn_is_no_request():
    r = reply([{"role": "user", "content": REMINDER}])
    assert r.calls == [] and r.content.startswith("Hello!")


def test_tool_results_followed_by_a_reminder_are_still_answered():
    call = {"id": "c1", "type": "function", "function": {"name": "Bash", "arguments": '{"command": "ls"}'}}
    r = reply([{"role": "user", "content": "Use Bash with command=ls"},
               {"role": "assistant", "content": None, "tool_calls": [call]},
               {"role": "tool", "tool_call_id": "c1", "content": "a.txt"},
               {"role": "user", "content": REMINDER},
               {"role": "system", "content": "Read is also available."}])
    assert r.calls == [] and "Bash returned 'a.txt'" in r.content


def test_codex_context_turns_are_not_the_request():
    r = reply([{"role": "system", "content": "You are Codex. Tools: Bash, Read."},
               {"role": "user", "content": "# AGENTS.md instructions for /repo\n\n<INSTRUCTIONS>\nUse Read.\n"
                                           "</INSTRUCTIONS>"},
               {"role": "user", "content": "<environment_context>\n  <cwd>/repo</cwd>\n  <shell>bash</shell>\n"
                                           "</environment_context>"},
               {"role": "user", "content": "Call Grep please"}])
    assert [name for name, _ in r.calls] == ["Grep"]


def test_user_words_keep_what_the_user_wrote():
    assert user_words(REMINDER + "hello " + REMINDER + "world") == "hello \nworld"
    assert user_words("<system-reminder>never closed: Bash") == "<system-reminder>never closed: Bash"
    assert user_words("<b>bold</b> and more") == "<b>bold</b> and more"  # markup inside a request stays
    assert user_words("<environment_context><cwd>/</cwd></environment_context>") == ""


NOTICE = ("[SYSTEM] This run is not complete until you call one of these terminal completion tools: "
          "submit_and_exit. If the task is complete, call the appropriate terminal completion tool now.")
BASH_CALL = {"id": "c1", "type": "function", "function": {"name": "Bash", "arguments": '{"command": "ls"}'}}


def test_a_notice_after_the_request_does_not_replace_it():
    r = reply([{"role": "user", "content": 'Use Bash with command="echo hi"'}, {"role": "user", "content": NOTICE}])
    assert [(name, json.loads(args)) for name, args in r.calls] == [("Bash", {"command": "echo hi"})]


def test_tool_results_before_a_notice_are_answered():
    r = reply([{"role": "user", "content": "Use Bash with command=ls"}, {"role": "user", "content": NOTICE},
               {"role": "assistant", "content": None, "tool_calls": [BASH_CALL]},
               {"role": "tool", "tool_call_id": "c1", "content": "a.txt"}, {"role": "user", "content": NOTICE}])
    assert r.calls == [] and "Bash returned 'a.txt'" in r.content


def test_a_notice_after_the_answer_is_obeyed():
    r = reply([{"role": "user", "content": "Use Bash with command=ls"},
               {"role": "assistant", "content": None, "tool_calls": [BASH_CALL]},
               {"role": "tool", "tool_call_id": "c1", "content": "a.txt"},
               {"role": "assistant", "content": "Here is what I found: Bash returned 'a.txt'."},
               {"role": "user", "content": NOTICE}])
    [(name, args)] = r.calls
    assert name == "submit_and_exit" and set(json.loads(args)) == {"summary", "verified"}


def test_a_notice_naming_no_tool_after_the_answer_gets_text():
    r = reply([{"role": "user", "content": "Use Bash with command=ls"},
               {"role": "assistant", "content": "done"},
               {"role": "user", "content": "[TASK RESUMPTION] This task was interrupted. Read the files again."}])
    assert [name for name, _ in r.calls] == ["Read"]  # it names Read: the notice is obeyed
    r = reply([{"role": "user", "content": "Use Bash with command=ls"}, {"role": "assistant", "content": "done"},
               {"role": "user", "content": "[ERROR] You did not finish."}])
    assert r.calls == [] and "Use Bash with command=ls" in r.content


def test_a_user_turn_after_the_answer_is_a_new_request():
    r = reply([{"role": "user", "content": "Use Bash with command=ls"}, {"role": "assistant", "content": "done"},
               {"role": "user", "content": NOTICE}, {"role": "user", "content": "Now call Grep"}])
    assert [name for name, _ in r.calls] == ["Grep"]


def test_client_notice_by_shape():
    for text in (NOTICE, "  [System Note] keep going", "[TASK RESUMPTION] resumed", "[ERROR] You did not use a tool",
                 "[automated-reminder] use submit_and_exit", "SYSTEM NOTICE: call submit_and_exit", "SYSTEM: wrap up"):
        assert client_notice(text), text
    for text in ('Use Bash with command="echo [SYSTEM]"', "[draft] Call Bash", "Note: call Bash",
                 "[1] call Bash", "System: call Bash", "[a very long label that is not a label at all, "
                 "system] Bash", "<system-reminder>x</system-reminder>", ""):
        assert not client_notice(text), text
