"""Tool dialects: importing this package registers every one of them."""

from . import internlm, llama3, qwen  # noqa: F401
