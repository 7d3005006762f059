"""Keep PyPI's torchvision out of the SGLang test process.

Its build does not load beside the CPU torch 2.13.0 ("operator torchvision::nms does not exist"),
yet SGLang's serving_chat imports model configs (InternVL, DeepSeek-OCR) that import
torchvision at module level, only to use it when such a model runs. So transformers is told
first that torchvision is absent (its answer is cached), and then an inert module stands in
for the names those configs import.
"""

from __future__ import annotations

import sys
import types
from typing import Any


class _Inert:
    """Any attribute, any call: a placeholder no test reaches."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __getattr__(self, name: str) -> Any:
        return _Inert()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return _Inert()


class _InertModule(types.ModuleType):
    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return _Inert


def install() -> None:
    if "torchvision" in sys.modules:
        return
    from transformers.utils import import_utils

    assert not import_utils.is_torchvision_available() or "torchvision" in sys.modules
    for name in ("torchvision", "torchvision.transforms", "torchvision.transforms.functional",
                 "torchvision.io", "torchvision.ops"):
        module = _InertModule(name)
        module.__path__ = []  # a package, so its submodules import
        sys.modules[name] = module
