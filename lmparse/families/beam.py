"""Beam checkpoints: no fixed wire format; the checkpoint's ``response_template`` under vLLM's Beam rules."""

from __future__ import annotations

from ..response.template import BeamTemplateParser
from ._spec import Family, Parser, Peers

# The markers are whatever the checkpoint's tokenizer_config.json declares: the parser is built
# from it (``create_parser(response_parser="beam", response_template=MODEL_DIR)``), so there is
# no tool dialect, reasoning tag, tokenizer or chat template to declare here.
FAMILY = Family(
    "beam", "Beam: the checkpoint's response_template, under vLLM's field and content-parser rules",
    response=Parser("beam", BeamTemplateParser),
    peers=Peers(vllm=("beam", "beam")),
    verified="vLLM's parser code and tests only: no Beam checkpoint, template or output is public here",
)
