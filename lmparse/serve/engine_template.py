"""Prompts rendered by the engine itself: llama-server's ``POST /apply-template``.

With ``lmparse serve --engine llamacpp --template-from-engine`` the engine renders each
request's messages and tools with the template its GGUF carries, and lmparse sends that
prompt to ``/completion``: one render per request (the engine's ``start`` renders once
and counts that prompt).  llama.cpp leaves out of the rendering the BOS it adds itself
when it tokenizes the prompt, so ``bos`` is empty.  vLLM's render endpoints answer with
token ids, not a prompt (ECOSYSTEM.md §3.6), so they are not used here.
"""

from __future__ import annotations

import threading
from typing import Any

from .engines.decoders import UpstreamError
from .templates import ChatTemplate

__all__ = ["EngineTemplate"]


class EngineTemplate(ChatTemplate):
    """A chat template that lives in the engine at ``url`` (nothing is compiled here);
    ``render`` is a blocking HTTP call (the app renders in its worker pool, off the event loop)."""

    def __init__(self, url: str, timeout: float = 60.0) -> None:
        self.url = url.rstrip("/") + "/apply-template"
        self.name = self.url
        self._bos = self._eos = ""
        self._timeout = timeout
        self._client: Any = None
        self._lock = threading.Lock()

    def client(self) -> Any:
        with self._lock:  # the worker threads share one connection pool
            if self._client is None:
                import httpx

                self._client = httpx.Client(timeout=httpx.Timeout(self._timeout, connect=10.0))
            return self._client

    def render(self, messages: list[dict], tools: list[dict] | None, thinking: bool | None,
               reasoning_effort: str | None = None) -> str:
        """The engine's prompt for the conversation.  A 4xx (the template rejects it) is a
        ``ValueError``, a client's error; an unreachable or failing engine a 502."""
        import httpx

        body: dict[str, Any] = {"messages": messages}
        if tools:
            body["tools"] = tools
        kwargs = {k: v for k, v in (("enable_thinking", thinking), ("reasoning_effort", reasoning_effort))
                  if v is not None}
        if kwargs:
            body["chat_template_kwargs"] = kwargs
        try:
            response = self.client().post(self.url, json=body)
            answer = response.json() if response.status_code < 500 else None
        except (httpx.HTTPError, ValueError) as exc:
            raise UpstreamError(f"upstream template at {self.url} failed: {type(exc).__name__}: {exc}") from None
        if response.status_code >= 500:
            raise UpstreamError(f"upstream template at {self.url} answered HTTP {response.status_code}")
        error = answer.get("error") if isinstance(answer, dict) else None
        if response.status_code >= 400:
            raise ValueError(error.get("message") if isinstance(error, dict) else f"HTTP {response.status_code}")
        prompt = answer.get("prompt") if isinstance(answer, dict) else None
        if not isinstance(prompt, str):
            raise UpstreamError(f"upstream template at {self.url} answered without a prompt string")
        return prompt
