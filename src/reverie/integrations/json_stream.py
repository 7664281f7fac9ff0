"""The conversations of a big export, one at a time (issue 22, point 12).

A ChatGPT or Claude.ai ``conversations.json`` is one JSON list that can be hundreds of
megabytes; :func:`items` yields its elements one by one from a binary stream (``ijson``'s
event parser, made for exactly this), so an import holds one conversation in memory,
never the whole file. Nesting deeper than :data:`MAX_DEPTH` is bad input (a
:class:`~reverie.errors.ParseError` naming the file), never a recursion or a memory blow-up.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO, Any

from ..errors import ParseError

MAX_DEPTH = 64
RELOCATE_BYTES = 16 * 1024 * 1024  # a malformed file this small is re-read to name the line
TOO_DEEP = "nested too deeply (arrays or objects inside each other)"


def items(fh: IO[bytes], path: str) -> Iterator[Any]:
    """The elements of the JSON list in ``fh``, one at a time; a top-level object (the
    ``{"conversations": [...]}`` form) is yielded whole, for the parser to unwrap."""
    import ijson
    from ijson.common import ObjectBuilder

    depth = 0
    builder: ObjectBuilder | None = None
    top: str | None = None
    try:
        for event, value in ijson.basic_parse(fh, use_float=True):
            opening = event in ("start_map", "start_array")
            closing = event in ("end_map", "end_array")
            if opening:
                depth += 1
                if depth > MAX_DEPTH:
                    raise ParseError(f"not usable JSON: {TOO_DEEP}", path=path)
            if top is None:
                top = event
                if event == "start_array":
                    continue
                builder = ObjectBuilder()  # an object or a scalar: built whole
            elif top == "start_array" and builder is None:
                if closing:  # the end of the list
                    depth -= 1
                    continue
                if not opening:
                    yield value  # a scalar element
                    continue
                builder = ObjectBuilder()
            assert builder is not None
            builder.event(event, value)
            if closing:
                depth -= 1
                if depth == (1 if top == "start_array" else 0):
                    yield builder.value
                    builder = None
        if top is None:
            raise ParseError("not JSON (the file is empty)", path=path)
        if builder is not None:
            yield builder.value  # a top-level scalar
    except ijson.JSONError as exc:
        where = _line_of_error(fh)
        if where is not None:
            raise ParseError(f"not JSON ({where[1]})", path=path, line=where[0]) from None
        said = " ".join(str(exc).split())[:160]
        raise ParseError(f"not JSON ({said})", path=path) from None


def _line_of_error(fh: IO[bytes]) -> tuple[int, str] | None:
    """Line and message of a JSON error, when ``fh`` is a small seekable file (the
    stream parser does not count lines; a big one is reported without)."""
    import json

    try:
        fh.seek(0)
        data = fh.read(RELOCATE_BYTES + 1)
    except (OSError, ValueError):
        return None
    if len(data) > RELOCATE_BYTES:
        return None
    try:
        json.loads(data)
    except json.JSONDecodeError as exc:
        return exc.lineno, f"{exc.msg}, column {exc.colno}"
    except (ValueError, RecursionError):
        return None
    return None


__all__ = ["MAX_DEPTH", "items"]
