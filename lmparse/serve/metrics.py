"""Prometheus counters for the serving path, in the text exposition format (no dependency)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

__all__ = ["Metrics", "Sample"]

Sample = tuple[str, str, dict[str, str], float]  # a collected value: (name, help, labels, value)

_HELP = {
    "lmparse_requests_total": ("counter", "Chat requests accepted, by API and streaming mode."),
    "lmparse_request_errors_total": ("counter", "Requests refused or failed, by API and HTTP status."),
    "lmparse_requests_in_flight": ("gauge", "Responses being generated now."),
    "lmparse_event_loop_tasks": ("gauge", "Tasks on the server's event loop now (each open connection has some)."),
    "lmparse_prompt_tokens_total": ("counter", "Prompt tokens of accepted requests."),
    "lmparse_streamed_tokens_total": ("counter", "Completion tokens generated and parsed."),
    "lmparse_reasoning_tokens_total": ("counter", "Completion tokens inside reasoning."),
    "lmparse_tool_calls_emitted_total": ("counter", "Tool calls sent to clients."),
    "lmparse_tool_calls_dropped_total": ("counter", "Tool calls the model wrote that no client saw: kind=rejected "
                                         "(unknown, malformed, filtered), kind=truncated (markup the end cut off)."),
    "lmparse_parse_cpu_seconds_total": ("counter", "Time spent in the response parsers (their calls never wait: "
                                        "CPU time, unless the process was preempted)."),
    "lmparse_engine_cancelled_total": ("counter", "Generations stopped because the client went away."),
    "lmparse_engine_completed_total": ("counter", "Generations that ran to their finish reason."),
    "lmparse_engine_failed_total": ("counter", "Generations ended by an engine error or by the server's shutdown."),
}


class Metrics:
    def __init__(self) -> None:
        self._values: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
        self._collectors: list[Callable[[], Iterable[Sample]]] = []

    def inc(self, name: str, amount: float = 1, **labels: str) -> None:
        key = (name, tuple(sorted(labels.items())))
        self._values[key] = self._values.get(key, 0) + amount

    def get(self, name: str, **labels: str) -> float:
        return self._values.get((name, tuple(sorted(labels.items()))), 0)

    def add_collector(self, collect: Callable[[], Iterable[Sample]]) -> None:
        """``collect() -> [(name, help, labels, value)]``, read at scrape time (engine counters)."""
        self._collectors.append(collect)

    def render(self) -> str:
        families: dict[str, tuple[str, str, list[tuple[tuple[tuple[str, str], ...], float]]]] = {
            name: (kind, text, []) for name, (kind, text) in _HELP.items()}
        for (name, labels), value in self._values.items():
            families[name][2].append((labels, value))
        for collect in self._collectors:
            for name, text, label_map, value in collect():
                families.setdefault(name, ("counter", text, []))[2].append((tuple(sorted(label_map.items())), value))
        lines: list[str] = []
        for name, (kind, text, samples) in families.items():
            lines += [f"# HELP {name} {text}", f"# TYPE {name} {kind}"]
            for labels, value in sorted(samples) or [((), 0)]:
                label_text = ",".join(f'{k}="{v}"' for k, v in labels)
                lines.append(f"{name}{{{label_text}}} {_number(value)}" if label_text else f"{name} {_number(value)}")
        return "\n".join(lines) + "\n"


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))
