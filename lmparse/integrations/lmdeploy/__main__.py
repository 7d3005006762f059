"""``python -m lmparse.integrations.lmdeploy serve api_server MODEL --tool-call-parser lmparse-qwen3 ...``:
LMDeploy's own CLI, with lmparse's parsers registered (the package import did that)."""

from lmdeploy import cli

cli.run()
