"""The serving path: ChatRunner, the OpenAI and Anthropic adapters, engines, the HTTP app.

Needs the ``serve`` extra (starlette, uvicorn, orjson, jinja2, ...): from a checkout,
``pip install -e '.[serve]'`` (docs/install.md).
"""

from .app import ModelBinding, create_app, simulated_binding
from .engines.base import Engine, EngineChunk, EngineStream, GenerationRequest
from .engines.simulated import SimulatedEngine
from .families import FAMILIES, Family, get_family
from .runner import ChatRunner, RunnerDelta, Usage

__all__ = [
    "ChatRunner", "RunnerDelta", "Usage", "Engine", "EngineChunk", "EngineStream", "GenerationRequest",
    "SimulatedEngine", "ModelBinding", "create_app", "simulated_binding", "FAMILIES", "Family", "get_family",
]
