"""Tool dialects, one small module per wire format.

Importing this package imports every module in it, which registers each dialect
with ``ToolParserManager``; a new dialect only needs its file here.  (The files are
listed with ``os.listdir``: ``pkgutil.iter_modules`` imports ``inspect``, a fifth of
``import lmparse``.)
"""

import os
from importlib import import_module

for _file in sorted(os.listdir(__path__[0])):
    if _file.endswith(".py") and not _file.startswith("_"):
        import_module(f"{__name__}.{_file[:-3]}")
