"""Message content for a text-only model: text parts joined, everything else a short placeholder.

Agent clients put images, PDFs and other files in user turns and in tool results (Claude
Code's Read of a PNG, a screenshot in a ``function_call_output``).  The chat templates
lmparse renders take text, so each non-text part becomes one line such as
``[image: image/png, 48 KB]`` or ``[document: report.pdf, application/pdf, 1.2 MB]``;
a document that carries text (Anthropic ``source.type`` ``text`` / ``content``) is given
as its text.  A part of a type the API does not define is a 400 naming it.

``anthropic_text`` reads Anthropic content blocks; ``openai_text`` reads Chat Completions
parts (``text``, ``image_url``, ``input_audio``, ``file``) and Responses parts
(``input_text``, ``output_text``, ``input_image``, ``input_file``, ``refusal``).
"""

from __future__ import annotations

from typing import Any

from .validate import checked, require

__all__ = ["anthropic_text", "anthropic_blocks_text", "openai_text", "placeholder", "human_size"]

_ANTHROPIC_BLOCKS = ("text", "image", "document", "search_result", "tool_reference")
_OPENAI_PARTS = ("text", "input_text", "output_text", "refusal", "image_url", "input_image", "input_audio",
                 "file", "input_file")


def human_size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    if n < 1024 * 1024:
        return f"{round(n / 1024)} KB"
    return f"{n / (1024 * 1024):.1f} MB"


def _base64_size(data: str) -> int:
    """Decoded size of base64 text, without decoding it."""
    n = len(data)
    return max(0, n * 3 // 4 - data.count("=", max(0, n - 2)))


def placeholder(kind: str, *details: object) -> str:
    """``[kind: detail, detail]``; details that are not text (client JSON) are left out."""
    shown = [d for d in details if isinstance(d, str) and d]
    return f"[{kind}: {', '.join(shown)}]" if shown else f"[{kind}]"


def _data_url(url: str) -> tuple[str | None, int | None]:
    """``(media type, decoded size)`` of a ``data:`` URL, or ``(None, None)``."""
    if not url.startswith("data:"):
        return None, None
    head, sep, data = url[5:].partition(",")
    if not sep:
        return None, None
    media_type = head.split(";", 1)[0] or None
    return media_type, _base64_size(data) if head.endswith(";base64") else len(data)


def _url_placeholder(kind: str, url: Any, path: str, filename: str | None = None) -> str:
    require(isinstance(url, str) and url != "", f"{path} must be a non-empty string", path)
    media_type, size = _data_url(url)
    if media_type is not None or size is not None:
        return placeholder(kind, filename, media_type, human_size(size) if size is not None else None)
    return placeholder(kind, filename, url[:200])


class _Joiner:
    """Text pieces joined as written; a placeholder sits on a line of its own."""

    __slots__ = ("parts",)

    def __init__(self) -> None:
        self.parts: list[str] = []

    def text(self, text: str) -> None:
        self.parts.append(text)

    def line(self, text: str) -> None:
        parts = self.parts
        if parts and not parts[-1].endswith("\n"):
            parts.append("\n")
        parts.append(text)
        parts.append("\n")

    def result(self) -> str:
        parts = self.parts
        if parts and parts[-1] == "\n" and len(parts) > 1:
            parts.pop()  # no newline after a trailing placeholder
        return "".join(parts)


# ---- Anthropic ---------------------------------------------------------------------------------


def _anthropic_source(block: dict, kind: str, path: str) -> str:
    source = checked(block.get("source"), dict, f"{path}.source must be an object", f"{path}.source")
    stype = source.get("type")
    title = block.get("title") if isinstance(block.get("title"), str) else None
    if stype == "base64":
        data = checked(source.get("data"), str, f"{path}.source.data must be a base64 string", f"{path}.source.data")
        media = source.get("media_type") if isinstance(source.get("media_type"), str) else None
        return placeholder(kind, title, media, human_size(_base64_size(data)))
    if stype == "url":
        return _url_placeholder(kind, source.get("url"), f"{path}.source.url", title)
    if stype == "file":
        return placeholder(kind, title, f"file {source.get('file_id')}")
    require(False, f"{path}.source.type must be base64, url, file, text or content; got {stype!r}",
            f"{path}.source.type")
    return ""


def _document(block: dict, path: str, out: _Joiner, depth: int) -> None:
    source = block.get("source")
    if not isinstance(source, dict):
        source = {}  # no type: _anthropic_source below reports it
    stype = source.get("type")
    title = block.get("title") if isinstance(block.get("title"), str) else None
    if stype == "text":
        data = checked(source.get("data"), str, f"{path}.source.data must be a string", f"{path}.source.data")
        out.line(placeholder("document", title))
        out.text(data)
    elif stype == "content":
        out.line(placeholder("document", title))
        out.text(anthropic_text(source.get("content"), f"{path}.source.content", depth + 1))
    else:
        out.line(_anthropic_source(block, "document", path))


_MAX_NESTING = 16  # search results and documents hold blocks; deeper than this is no real request


def anthropic_text(content: Any, path: str, depth: int = 0) -> str:
    """A user turn's or a tool result's content as text (a string, or a list of blocks)."""
    if isinstance(content, str):
        return content
    require(isinstance(content, list), f"{path} must be a string or a list of content blocks", path)
    return anthropic_blocks_text([(f"{path}[{j}]", block) for j, block in enumerate(content)], depth)


def anthropic_blocks_text(blocks: list[tuple[str, Any]], depth: int = 0) -> str:
    """Blocks given with their own paths (``messages[2].content[3]``) as one text."""
    require(depth <= _MAX_NESTING, f"{blocks[0][0] if blocks else 'content'} is nested more than {_MAX_NESTING} "
            "blocks deep", blocks[0][0] if blocks else None)
    out = _Joiner()
    for bpath, block in blocks:
        require(isinstance(block, dict), f"{bpath} must be an object", bpath)
        kind = block.get("type")
        if kind == "text":
            require(isinstance(block.get("text"), str), f"{bpath}.text must be a string", f"{bpath}.text")
            out.text(block["text"])
        elif kind == "image":
            out.line(_anthropic_source(block, "image", bpath))
        elif kind == "document":
            _document(block, bpath, out, depth)
        elif kind == "search_result":
            out.line(placeholder("search result", block.get("title"), block.get("source")))
            out.text(anthropic_text(block.get("content", []), f"{bpath}.content", depth + 1))
        elif kind == "tool_reference":  # a tool search result names a tool
            out.line(placeholder("tool", block.get("tool_name") or block.get("name")))
        else:
            require(False, f"{bpath}.type: Input tag {kind!r} found using 'type' does not match any of the "
                    f"expected tags: {', '.join(repr(t) for t in _ANTHROPIC_BLOCKS)}", f"{bpath}.type")
    return out.result()


# ---- OpenAI (Chat Completions and Responses) -----------------------------------------------------


def _file_placeholder(spec: Any, path: str) -> str:
    require(isinstance(spec, dict), f"{path} must be an object", path)
    name = spec.get("filename") if isinstance(spec.get("filename"), str) else None
    data = spec.get("file_data")
    if isinstance(data, str):
        media, size = _data_url(data)
        size = size if size is not None else _base64_size(data)
        return placeholder("file", name, media, human_size(size))
    if isinstance(spec.get("file_url"), str):
        return placeholder("file", name, spec["file_url"][:200])
    if isinstance(spec.get("file_id"), str):
        return placeholder("file", name, f"file {spec['file_id']}")
    require(False, f"{path} needs file_data, file_url or file_id", path)
    return ""


def openai_text(content: Any, path: str) -> str:
    """Message content as text: a string, or a list of content parts."""
    if isinstance(content, str):
        return content
    require(isinstance(content, list), f"{path} must be a string or a list of content parts", path)
    out = _Joiner()
    for j, part in enumerate(content):
        ppath = f"{path}[{j}]"
        require(isinstance(part, dict), f"{ppath} must be an object", ppath)
        kind = part.get("type")
        if kind in ("text", "input_text", "output_text"):
            require(isinstance(part.get("text"), str), f"{ppath}.text must be a string", f"{ppath}.text")
            out.text(part["text"])
        elif kind == "refusal":
            out.text(part.get("refusal") if isinstance(part.get("refusal"), str) else "")
        elif kind == "image_url":
            spec = part.get("image_url")
            url = spec.get("url") if isinstance(spec, dict) else spec
            out.line(_url_placeholder("image", url, f"{ppath}.image_url.url"))
        elif kind == "input_image":
            if part.get("image_url") is not None:
                out.line(_url_placeholder("image", part.get("image_url"), f"{ppath}.image_url"))
            else:
                file_id = part.get("file_id")
                require(isinstance(file_id, str), f"{ppath} needs image_url or file_id", f"{ppath}.image_url")
                out.line(placeholder("image", f"file {file_id}"))
        elif kind == "input_audio":
            spec = part.get("input_audio", part)
            data = checked(spec.get("data") if isinstance(spec, dict) else None, str,
                           f"{ppath}.input_audio.data must be a base64 string", f"{ppath}.input_audio.data")
            out.line(placeholder("audio", spec.get("format"), human_size(_base64_size(data))))
        elif kind == "file":
            out.line(_file_placeholder(part.get("file"), f"{ppath}.file"))
        elif kind == "input_file":
            out.line(_file_placeholder(part, ppath))
        else:
            require(False, f"{ppath}.type must be one of {', '.join(_OPENAI_PARTS)}; got {kind!r}", f"{ppath}.type")
    return out.result()
