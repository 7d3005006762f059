"""Packaging (the metadata is in pyproject.toml): the pure-Python package always, and with
``LMPARSE_COMPILE=1`` (or ``pip wheel . -C compile=1``) the parser core that
``lmparse/_core.py`` lists compiled by mypyc from the same source files, which makes the wheel a
platform one.  ``make compiled`` builds the compiled core in place for the tests.
"""

from __future__ import annotations

import os
import runpy

from setuptools import setup


def _ext_modules() -> list:
    if os.environ.get("LMPARSE_COMPILE") != "1":
        return []
    from mypyc.build import mypycify

    core = runpy.run_path(os.path.join("lmparse", "_core.py"))
    paths = [module.replace(".", "/") + ".py" for module in core["COMPILED_MODULES"]]
    # What was compiled, by content: lmparse/_core.py loads the build only while every source
    # still matches (a wheel's files carry no usable times).
    with open(os.path.join("lmparse", "_build_info.py"), "w") as out:
        out.write('"""Written by setup.py when it compiles the core: the sources the build was made from."""\n\n')
        out.write(f"SOURCES = {core['source_digests']()!r}\n")
    return mypycify(paths, opt_level="3", group_name=core["GROUP"])


setup(ext_modules=_ext_modules())
