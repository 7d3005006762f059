"""Tool dialects: importing this package registers every one of them."""

from . import glm47, internlm, llama3, qwen, qwen3coder  # noqa: F401
