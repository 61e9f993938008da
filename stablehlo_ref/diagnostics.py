"""Diagnostics as MLIR tools print them, for people and for editors' and CI's problem matchers:

    file.mlir:2:8: error: stablehlo.add: C1: ...
      %0 = stablehlo.add %a, %a : tensor<3xf32>
           ^
    file.mlir:1:1: note: ...

The first line is the whole diagnostic (`location: severity: message`, or `severity: message`
without a location); the source line and a caret under the column follow when the location is
`file:line:col` and the text of that file is known (`sources`). Notes for related locations
follow in the same form.

    format_diagnostic(message, location, severity="error", sources=..., notes=[(loc, msg)])
    format_error(err, sources=...)   for a StableHLOError (its .location, .message, .notes)
"""
from __future__ import annotations

import re
from typing import Callable, Iterable, Mapping, Optional, Tuple, Union

_FILE_LINE_COL = re.compile(r"^(?P<file>.*):(?P<line>\d+):(?P<col>\d+)$")

Sources = Union[None, str, Mapping[str, str], Callable[[str], Optional[str]]]


def split_location(location: Optional[str]) -> Optional[Tuple[str, int, int]]:
    """`file:line:col` -> (file, line, col); None for any other location (byte offsets, op names)."""
    if not location:
        return None
    m = _FILE_LINE_COL.match(location)
    if not m:
        return None
    return m.group("file"), int(m.group("line")), int(m.group("col"))


def _text_of(filename: str, sources: Sources) -> Optional[str]:
    if sources is None:
        return None
    if isinstance(sources, str):
        return sources
    if callable(sources):
        return sources(filename)
    return sources.get(filename)


def source_excerpt(location: Optional[str], sources: Sources) -> Optional[str]:
    """The source line a `file:line:col` location points into and a caret under its column
    (two lines, no trailing newline), or None when the line is not known."""
    parts = split_location(location)
    if parts is None:
        return None
    filename, line, col = parts
    text = _text_of(filename, sources)
    if text is None or line < 1:
        return None
    lines = text.split("\n")
    if line > len(lines):
        return None
    src = lines[line - 1].rstrip("\r")
    col = max(1, min(col, len(src) + 1))
    # keep tabs in the padding so that the caret lines up however the terminal shows them
    pad = "".join(c if c == "\t" else " " for c in src[:col - 1])
    return f"{src}\n{pad}^"


def format_diagnostic(message: str, location: Optional[str] = None, *, severity: str = "error",
                      sources: Sources = None,
                      notes: Iterable[Tuple[Optional[str], str]] = ()) -> str:
    """One diagnostic (without a trailing newline): `location: severity: message`, the source
    line with a caret when known, then each note in the same form."""
    head = f"{location}: {severity}: {message}" if location else f"{severity}: {message}"
    out = [head]
    ex = source_excerpt(location, sources)
    if ex:
        out.append(ex)
    for nloc, nmsg in notes:
        out.append(format_diagnostic(nmsg, nloc, severity="note", sources=sources))
    return "\n".join(out)


def format_error(err, *, sources: Sources = None, severity: str = "error") -> str:
    """`format_diagnostic` for an exception: a StableHLOError's `.message`, `.location` and
    optional `.notes` (a list of (location, message)); any other exception's str()."""
    message = getattr(err, "message", None)
    if message is None:
        message = str(err)
    return format_diagnostic(message, getattr(err, "location", None), severity=severity,
                             sources=sources, notes=getattr(err, "notes", None) or ())
