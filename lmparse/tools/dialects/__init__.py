"""Tool dialects, one small module per wire format.

Importing this package imports every module in it, which registers each dialect
with ``ToolParserManager``; a new dialect only needs its file here.
"""

from importlib import import_module
from pkgutil import iter_modules

for _module in iter_modules(__path__):
    if not _module.name.startswith("_"):
        import_module(f"{__name__}.{_module.name}")
