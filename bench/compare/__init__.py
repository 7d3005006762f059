"""``python -m bench.compare``: lmparse beside every peer's parsers (vLLM, SGLang, LMDeploy, SMG).

Each peer runs as a worker subprocess with its own virtualenv's interpreter
(``bench.compare.worker``); this process never imports a peer.  SMG's Rust parser is a
binary that its worker (this interpreter) drives (``bench.compare.peer_smg``).  Modules marked
"peer side" import only the standard library and ``bench.fixtures`` /
``bench.timing`` / ``bench.verify``, because the workers import them too.
"""
