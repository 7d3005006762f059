"""Engines: what generates tokens behind the server.

``base.Engine`` is the interface (``start(request) -> EngineStream``); ``simulated`` is the
embedded default, a deterministic stand-in model.  Upstream HTTP engines (vLLM, SGLang,
LMDeploy, llama.cpp raw-completion endpoints) implement the same interface: ``upstream``
is the I/O shell around three sans-IO parts, ``bodies`` (the request), ``sse`` (the
body's lines) and ``decoders`` (each engine's events as chunks).
"""

from .base import Engine, EngineChunk, EngineStream, GenerationRequest
from .simulated import SimulatedEngine
from .upstream import UpstreamEngine

__all__ = ["Engine", "EngineChunk", "EngineStream", "GenerationRequest", "SimulatedEngine", "UpstreamEngine"]
