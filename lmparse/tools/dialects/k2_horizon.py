"""K2 Horizon (IFM): ``<ifm|tool_calls>`` groups of ``<ifm|tool_call>`` calls with key/value pairs.

One group per turn (PROTOCOLS.md, ``k2-horizon``)::

    <ifm|tool_calls>\\n<ifm|tool_call>NAME\\n<ifm|arg_key>K</ifm|arg_key>\\n<ifm|arg_value>V</ifm|arg_value>\\n
    </ifm|tool_call>\\n<ifm|tool_call>…</ifm|tool_call>\\n</ifm|tool_calls>

The request picks the call syntax the template teaches (``chat_template_kwargs.tool_call_format``):
``xml`` (the default, above), ``xml_typed`` (an ``<ifm|arg_type>T</ifm|arg_type>`` between key and
value; T's part before ``[`` is a type that picks one of a union schema's types, or types a value
with no schema, ``any`` keeping it raw) or ``json`` (``<ifm|tool_call>{"name": N, "arguments":
{…}}</ifm|tool_call>``).  A call in another syntax than the requested one is malformed, as in vLLM.
Values: raw text typed by the schema (``XmlValueReader``: strings stream, typed values convert at
``</ifm|arg_value>``); JSON arguments are converted value by value by the schema when the call
closes (``"2"`` -> 2 for an integer, a JSON-encoded object string -> the object; a non-string for
a string property -> its JSON text).

Tokens (bw ``k2-horizon-36b``): every tag is one token (``<ifm|arg_type>`` per peers, unverified);
the parser matches text, so a split anywhere is held.  No call syntax for constraints: XGrammar has
no IFM style.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

from ...schema import schema_type
from ..base import MORE, PAYLOAD_CLOSED, Events, PayloadStep
from ..xml import MALFORMED, ArgNameStep, ArgStartStep, Found, FunctionStep, Typed, XmlToolParser, argument_items
from ..xml_values import convert_value
from ._syntax import arg_start_hook, at_partial, read_until, skip_ws
from ..._mypyc import mypyc_attr

TOOL_CALLS: Final = "<ifm|tool_calls>"
END_TOOL_CALLS: Final = "</ifm|tool_calls>"
TOOL_CALL: Final = "<ifm|tool_call>"
END_TOOL_CALL: Final = "</ifm|tool_call>"
ARG_KEY: Final = "<ifm|arg_key>"
END_ARG_KEY: Final = "</ifm|arg_key>"
ARG_TYPE: Final = "<ifm|arg_type>"
END_ARG_TYPE: Final = "</ifm|arg_type>"
ARG_VALUE: Final = "<ifm|arg_value>"
END_ARG_VALUE: Final = "</ifm|arg_value>"
FORMATS: Final = ("xml", "xml_typed", "json")
_MAX_NAME: Final = 256  # a longer "name" is prose
_MAX_JSON_CALL: Final = 1 << 20  # a JSON call body longer than this without its close tag is not one
_NAME_END: Final = re.compile(r"[<{]")


def call_format(template_kwargs: Any) -> str:
    """The syntax a request asked for (an unknown value: the default, ``xml``)."""
    wanted = template_kwargs.get("tool_call_format") if hasattr(template_kwargs, "get") else None
    return wanted if wanted in FORMATS else "xml"


@mypyc_attr(allow_interpreted_subclasses=True)
class K2HorizonToolParser(XmlToolParser):
    summary = (f"{TOOL_CALLS}\\n{TOOL_CALL}NAME\\n{ARG_KEY}K{END_ARG_KEY}\\n[{ARG_TYPE}T{END_ARG_TYPE}\\n]"
               f"{ARG_VALUE}V{END_ARG_VALUE}\\n…{END_TOOL_CALL}\\n{END_TOOL_CALLS}")
    tool_open_tags = (TOOL_CALLS,)
    tool_close_tag = END_TOOL_CALLS
    # The tags bellwether's pieces show as single tokens (PROTOCOLS.md; ``<ifm|arg_type>`` is so
    # only per peers): a decoding with spaces between them parses alike (``lmparse.tools.spaced``).
    spaced_tokens = (TOOL_CALLS, TOOL_CALL, ARG_KEY, END_ARG_KEY, ARG_VALUE, END_ARG_VALUE, END_TOOL_CALL,
                     END_TOOL_CALLS)
    tool_close_prefixes = ()
    arg_value_close = END_ARG_VALUE
    arg_value_close_prefixes = ()
    parameter_open = ARG_KEY
    function_close = END_TOOL_CALL
    # No template in the test data: whitespace between groups is the group's (one group per turn).
    block_lead = ""
    block_separator = None

    def _reset_payload(self) -> None:
        super()._reset_payload()
        self._format = call_format(self.request.template_kwargs)
        self._json_seen = 0  # how far a JSON call body was searched for its close tag

    # ---- the hooks ----------------------------------------------------------------------

    def _consume_function(self, payload: str, pos: int, final: bool) -> Found[FunctionStep]:
        start, pos = pos, skip_ws(payload, pos)
        if not payload.startswith(TOOL_CALL, pos):
            if pos == len(payload) or at_partial(payload, pos, TOOL_CALL):
                return None
            return start, None, "done"  # the group's close tag (or stray text) ends the payload
        begin = pos + len(TOOL_CALL)
        stop = _NAME_END.search(payload, begin, begin + _MAX_NAME)
        if stop is None:
            return MALFORMED if len(payload) - begin >= _MAX_NAME else None
        name = payload[begin:stop.start()].strip()
        if stop.group() == "{" or self._format == "json":
            return MALFORMED  # handled by ``_consume_stream_payload`` when JSON was asked for
        if not name or any(c.isspace() for c in name):
            return MALFORMED
        after = skip_ws(payload, stop.start())
        if payload.startswith(ARG_KEY, after) or payload.startswith(END_TOOL_CALL, after):
            return after, name, "arg_start"
        if after == len(payload) or at_partial(payload, after, ARG_KEY, END_TOOL_CALL):
            return None
        return MALFORMED

    def _consume_arg_start(self, payload: str, pos: int) -> Found[ArgStartStep]:
        return arg_start_hook(payload, pos, ARG_KEY, END_TOOL_CALL, END_TOOL_CALLS)

    def _consume_arg_name(self, payload: str, pos: int) -> Found[ArgNameStep]:
        found = read_until(payload, pos + len(ARG_KEY), END_ARG_KEY, forbidden="<")
        if not found:
            return found
        key, pos = found
        key = key.strip()
        pos = skip_ws(payload, pos)
        declared: Typed | None = None
        if payload.startswith(ARG_TYPE, pos):
            if self._format != "xml_typed":
                return MALFORMED  # a type tag where the untyped syntax was asked for
            typed = read_until(payload, pos + len(ARG_TYPE), END_ARG_TYPE, forbidden="<")
            if not typed:
                return typed
            kind, pos = typed
            if not kind.strip():
                return MALFORMED
            declared = Typed(kind.strip())
            pos = skip_ws(payload, pos)
        elif pos == len(payload) or at_partial(payload, pos, ARG_TYPE):
            return None
        elif self._format == "xml_typed":
            return MALFORMED  # the typed syntax writes a type before every value
        if not key:
            return MALFORMED
        if payload.startswith(ARG_VALUE, pos):
            return pos + len(ARG_VALUE), key, declared
        if pos == len(payload) or at_partial(payload, pos, ARG_VALUE):
            return None
        return MALFORMED

    # ---- the JSON syntax: one envelope per call, converted when the call closes -------------

    def _consume_stream_payload(self, text: str, events: Events, *, final: bool) -> PayloadStep:
        if self._format != "json":
            return super()._consume_stream_payload(text, events, final=final)
        pos = 0
        while True:
            start, pos = pos, skip_ws(text, pos)
            if not text.startswith(TOOL_CALL, pos):
                if pos == len(text) or at_partial(text, pos, TOOL_CALL):
                    return (len(text) if final and self.committed else start), MORE
                return start, PAYLOAD_CLOSED  # the group's close tag (or stray text) ends the payload
            body = pos + len(TOOL_CALL)
            # (What was searched is measured from the call's start, where the next text begins.)
            end = text.find(END_TOOL_CALL, max(body, start + self._json_seen - len(END_TOOL_CALL)))
            if end == -1:
                self._json_seen = len(text) - start
                if len(text) - body > _MAX_JSON_CALL:
                    return start, self._reject(events)
                return (len(text) if final and self.committed else start), MORE
            self._json_seen = 0
            call = self._json_call(text[body:end])
            if call is None:
                return start, self._reject(events)
            name, arguments = call
            self._begin_call()
            self._emit_name(events, name)
            self._calls.arguments(events, arguments)
            self._end_call(events)
            pos = end + len(END_TOOL_CALL)

    def _json_call(self, body: str) -> tuple[str, str] | None:
        """``(name, arguments JSON)`` of a JSON call body, converted by the schema; None if it is not one."""
        try:
            call = json.loads(body)
        except ValueError:
            return None
        if not isinstance(call, dict):
            return None
        name, arguments = call.get("name"), call.get("arguments", {})
        if not isinstance(name, str) or not name or any(c.isspace() for c in name) or not isinstance(arguments, dict):
            return None
        schema = self.request.schema_for(name) if self.request.tools else None
        props = schema.get("properties") if isinstance(schema, dict) else None
        props = props if isinstance(props, dict) else {}
        pairs = []
        for key, value in arguments.items():
            kind = schema_type(props.get(key))
            if isinstance(value, str) and kind not in (None, "string"):
                text = convert_value(value, kind)
            elif isinstance(value, str):
                text = json.dumps(value, ensure_ascii=False)
            elif kind == "string":
                text = json.dumps(json.dumps(value, ensure_ascii=False), ensure_ascii=False)
            else:
                text = json.dumps(value, ensure_ascii=False)
            pairs.append(f"{json.dumps(key, ensure_ascii=False)}: {text}")
        return name, "{" + ", ".join(pairs) + "}"

    # ---- rendering ------------------------------------------------------------------------

    @classmethod
    def render(cls, calls: list[tuple[str, str]]) -> str:
        """The default (``xml``) syntax, all calls in one group."""
        if not calls:
            return ""
        out = []
        for name, arguments in calls:
            pairs = "".join(f"\n{ARG_KEY}{k}{END_ARG_KEY}\n{ARG_VALUE}{v}{END_ARG_VALUE}"
                            for k, v in argument_items(arguments))
            out.append(f"{TOOL_CALL}{name}{pairs}{chr(10) if pairs else ''}{END_TOOL_CALL}")
        body = "\n".join(out)
        return f"{TOOL_CALLS}\n{body}\n{END_TOOL_CALLS}"
