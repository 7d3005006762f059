"""lmparse's parsers inside the engines people scale on: vLLM, SGLang and LMDeploy plugins.

Each submodule imports its engine and registers ``lmparse-<name>`` tool and reasoning parsers
into that engine's own registries; import it only inside a process that has the engine.
See docs/plugins.md for the launch lines and the compatibility table.
"""
