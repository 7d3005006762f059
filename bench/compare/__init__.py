"""``python -m bench.compare``: lmparse beside every peer's parsers (vLLM, SGLang, LMDeploy).

Each peer runs as a worker subprocess with its own virtualenv's interpreter
(``bench.compare.worker``); this process never imports a peer.  Modules marked
"peer side" import only the standard library and ``bench.fixtures`` /
``bench.timing`` / ``bench.verify``, because the workers import them too.
"""
