"""A position-based scanner over MLIR text: skips whitespace and `//` comments, matches
tokens with precompiled regexes, and reports errors as `file:line:col: message`."""
from __future__ import annotations

import bisect
import re

from ..errors import ParseError

_WS = re.compile(r"(?:\s+|//[^\n]*)+")
_WS_START = frozenset(" \t\n\r\f\v/")   # ('' is not in it: end of text)
BARE_ID = re.compile(r"[A-Za-z_][\w$.]*")
VALUE_ID = re.compile(r"%([\w$.\-]+)(?:#(\d+))?")
SYMBOL_ID = re.compile(r'@([\w$.\-]+)')
BLOCK_ID = re.compile(r"\^([\w$.\-]+)")
INTEGER = re.compile(r"[-+]?(?:0x[0-9a-fA-F]+|\d+)(?![\w.])")
FLOAT = re.compile(r"[-+]?(?:\d+\.\d*(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+)")
NUMBER = re.compile(r"[-+]?(?:0x[0-9a-fA-F]+|\d+\.\d*(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+|\d+)")
STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"', re.S)
HASH_ID = re.compile(r"#([\w$.\-]+)")
BANG_ID = re.compile(r"!([\w$.\-]+)")
# Integer literals past this many digits cannot fit any element type (i64/ui64: 20 digits, hex
# 16; the widest integer attribute MLIR prints is far below this), and Python refuses int() of
# more than 4,300 decimal digits anyway.
MAX_INT_DIGITS = 400
MAX_FLOAT_CHARS = 1000


def unescape_string(body: str) -> str:
    if "\\" not in body:
        return body
    out = bytearray()
    i = 0
    n = len(body)
    while i < n:
        c = body[i]
        if c != "\\":
            out += c.encode("utf-8")
            i += 1
            continue
        nxt = body[i + 1] if i + 1 < n else ""
        if nxt in '"\\':
            out += nxt.encode()
            i += 2
        elif nxt == "n":
            out += b"\n"
            i += 2
        elif nxt == "t":
            out += b"\t"
            i += 2
        elif re.match(r"[0-9a-fA-F]{2}", body[i + 1:i + 3]):
            out.append(int(body[i + 1:i + 3], 16))
            i += 3
        else:
            out += nxt.encode()
            i += 2
    return out.decode("utf-8", errors="surrogateescape")


class Scanner:
    __slots__ = ("s", "pos", "filename", "_line_starts")

    def __init__(self, text: str, filename: str = "<string>"):
        self.s = text
        self.pos = 0
        self.filename = filename
        self._line_starts = None

    # ------------------------------------------------------------ positions
    def line_col(self, pos: int):
        if self._line_starts is None:
            starts = [0]
            s = self.s
            i = s.find("\n")
            while i >= 0:
                starts.append(i + 1)
                i = s.find("\n", i + 1)
            self._line_starts = starts
        line = bisect.bisect_right(self._line_starts, pos)
        return line, pos - self._line_starts[line - 1] + 1

    def location(self, pos=None) -> str:
        line, col = self.line_col(self.pos if pos is None else pos)
        return f"{self.filename}:{line}:{col}"

    def error(self, message: str, pos=None) -> ParseError:
        """An error at `pos`; without one, a wrong-token error at the current token, which MLIR
        reports at the end of the previous non-blank line when the token starts a line (where
        the expected token was missing)."""
        if pos is None:
            m = _WS.match(self.s, self.pos)
            at = m.end() if m else self.pos
            p = self._wrong_token_pos()
        else:
            at = p = pos
        snippet = self.s[at:at + 30].split("\n")[0]
        found = f" (found '{snippet}')" if snippet else " (found end of input)"
        return ParseError(message + found, self.location(p))

    def _wrong_token_pos(self) -> int:
        s, p = self.s, self.pos
        if p >= len(s) and p > 0:
            p -= 1
        q = p
        while True:
            while q > 0 and s[q - 1] in " \t":
                q -= 1
            if q == 0:
                return p
            if s[q - 1] not in "\n\r":
                return q
            q -= 1

    # ------------------------------------------------------------ scanning
    def ws(self) -> None:
        s = self.s
        p = self.pos
        if p < len(s) and s[p] in _WS_START:
            if s[p] == " " and s[p + 1:p + 2] not in _WS_START:   # the common single space
                self.pos = p + 1
            else:
                self.pos = _WS.match(s, p).end() if s[p] != "/" else self._comment(p)

    def _comment(self, p: int) -> int:
        m = _WS.match(self.s, p)
        return m.end() if m else p

    def at_end(self) -> bool:
        self.ws()
        return self.pos >= len(self.s)

    def peek(self, lit: str) -> bool:
        s = self.s
        p = self.pos
        if s.startswith(lit, p):
            return True
        if p < len(s) and s[p] in _WS_START:
            self.ws()
            return s.startswith(lit, self.pos)
        return False

    def peek_char(self) -> str:
        self.ws()
        return self.s[self.pos:self.pos + 1]

    def delimited(self, open_: str, close: str, item, *, opened: bool = False) -> list:
        """`open_ item (, item)* close` (possibly empty) -> [item(), ...]; `opened` when the
        opening token was already consumed."""
        if not opened:
            self.expect(open_)
        out = []
        if not self.accept(close):
            while True:
                out.append(item())
                if not self.accept(","):
                    break
            self.expect(close)
        return out

    def accept(self, lit: str) -> bool:
        s = self.s
        p = self.pos
        if s.startswith(lit, p):
            self.pos = p + len(lit)
            return True
        if p < len(s) and s[p] in _WS_START:
            self.ws()
            p = self.pos
            if s.startswith(lit, p):
                self.pos = p + len(lit)
                return True
        return False

    def accept_keyword(self, kw: str) -> bool:
        self.ws()
        s = self.s
        if s.startswith(kw, self.pos):
            end = self.pos + len(kw)
            if end >= len(s) or not (s[end].isalnum() or s[end] in "_$."):
                self.pos = end
                return True
        return False

    def peek_keyword(self, kw: str) -> bool:
        save = self.pos
        ok = self.accept_keyword(kw)
        self.pos = save
        return ok

    def expect(self, lit: str, what: str | None = None) -> None:
        s = self.s
        p = self.pos
        if s.startswith(lit, p):
            self.pos = p + len(lit)
            return
        if not self.accept(lit):
            raise self.error(f"expected '{lit}'" + (f" {what}" if what else ""))

    def expect_keyword(self, kw: str) -> None:
        if not self.accept_keyword(kw):
            raise self.error(f"expected '{kw}'")

    def match(self, regex):
        s = self.s
        p = self.pos
        if p < len(s) and s[p] in _WS_START:
            self.ws()
            p = self.pos
        m = regex.match(s, p)
        if m:
            self.pos = m.end()
        return m

    def bare_id(self, what: str = "identifier") -> str:
        m = self.match(BARE_ID)
        if not m:
            raise self.error(f"expected {what}")
        return m.group(0)

    def string(self) -> str:
        m = self.match(STRING)
        if not m:
            raise self.error("expected string literal")
        return unescape_string(m.group(1))

    def integer(self) -> int:
        m = self.match(INTEGER)
        if not m:
            raise self.error("expected integer")
        return self.int_value(m.group(0), m.start())

    def i64(self) -> int:
        """An integer literal that must fit the i64 it goes into (as MLIR's parseInteger<int64_t>
        checks the entries of a pretty-printed i64 list)."""
        self.ws()
        pos = self.pos
        v = self.integer()
        if not -(1 << 63) <= v < 1 << 63:
            raise self.error(f"integer {v} does not fit in i64", pos)
        return v

    def int_value(self, text: str, pos: int) -> int:
        """The value of an integer literal (decimal or 0x hex) scanned at `pos`; a literal longer
        than any integer type holds (MLIR's widest is i128... and ours i64), or a float
        literal where an integer is expected, is a ParseError."""
        digits = text.lstrip("+-")
        if len(digits) > MAX_INT_DIGITS:
            raise self.error(f"integer literal of {len(digits)} digits is too large", pos)
        try:
            if digits[:2] in ("0x", "0X"):
                v = int(digits[2:], 16)
                return -v if text.startswith("-") else v
            return int(text, 10)
        except ValueError:
            raise self.error(f"expected an integer, got '{text[:40]}'", pos) from None

    def float_value(self, text: str, pos: int) -> float:
        """The value of a decimal float literal scanned at `pos` (overflow gives +-inf, as
        MLIR's APFloat does)."""
        if len(text) > MAX_FLOAT_CHARS:
            raise self.error(f"float literal of {len(text)} characters is too long", pos)
        try:
            return float(text)
        except (ValueError, OverflowError):
            raise self.error(f"expected a floating-point number, got '{text[:40]}'", pos) from None

    def balanced(self, open_ch: str = "<", close_ch: str = ">") -> str:
        """The raw text from the current `open_ch` to its matching `close_ch` (inclusive),
        honouring nested brackets of all kinds and string literals."""
        self.ws()
        s = self.s
        start = self.pos
        if not s.startswith(open_ch, start):
            raise self.error(f"expected '{open_ch}'")
        depth = 0
        i = start
        n = len(s)
        pairs = {"<": ">", "(": ")", "[": "]", "{": "}"}
        closers = set(pairs.values())
        while i < n:
            c = s[i]
            if c == '"':
                m = STRING.match(s, i)
                if not m:
                    raise self.error("unterminated string", i)
                i = m.end()
                continue
            if c in pairs:
                depth += 1
            elif c in closers:
                if c == ">" and i > 0 and s[i - 1] == "-":   # `->` inside a type
                    i += 1
                    continue
                depth -= 1
                if depth == 0:
                    self.pos = i + 1
                    return s[start:i + 1]
            i += 1
        raise self.error(f"unbalanced '{open_ch}'", start)
