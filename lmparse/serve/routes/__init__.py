"""The HTTP routes, one module per API, each around the shared ``GenerationService``.

``chat`` serves OpenAI ``POST /v1/chat/completions``; ``responses`` OpenAI ``POST
/v1/responses`` with ``GET`` / ``DELETE /v1/responses/{id}``; ``messages`` Anthropic ``POST
/v1/messages`` and ``/v1/messages/count_tokens``; ``status`` ``/v1/models``, ``/health``,
``/ready`` and ``/metrics``.  The generating ones share one flow (``generation``); every
one answers through the ``Edge`` (API key, body, errors in the path's API shape).
"""
