"""What the compiled core needs from mypyc, without a runtime dependency on it.

``mypyc_attr(allow_interpreted_subclasses=True)`` marks a class of the parser core that plain
Python classes may subclass (the dialects, the engine plugins, a user's own parser): mypyc
reads the decorator while it compiles; at run time, compiled or not, it changes nothing.
"""

from __future__ import annotations

from types import FunctionType
from typing import TYPE_CHECKING, Any

__all__ = ["compiled", "mypyc_attr"]

if TYPE_CHECKING:
    from mypy_extensions import mypyc_attr as mypyc_attr
else:
    def mypyc_attr(*_args: Any, **_flags: Any) -> Any:
        return lambda cls: cls


def compiled(function: object) -> bool:
    """Whether ``function`` (one of the calling module's own) was compiled: a few pure-Python
    shortcuts (``object.__new__`` without ``__init__``) are not allowed on compiled classes,
    where the plain constructor is the fast way anyway."""
    return not isinstance(function, FunctionType)
