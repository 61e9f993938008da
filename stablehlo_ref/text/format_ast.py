"""An op's assembly format (the spec's `syntax.format`, MLIR's declarative assembly-format
language) compiled once into a list of elements (`Lit`, `Var`, `Kw`, `TypeDir`, `RefDir`,
`FuncType`, `Custom`, `Optional_`), and what the format's `$names` refer to in the op's spec.
The parser (formats.py), the printer and the custom directives (directives.py) all walk it."""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from .. import spec as _spec


@dataclass
class Lit:
    text: str


@dataclass
class Var:
    name: str
    anchor: bool = False


@dataclass
class Kw:             # operands | results | regions | attr-dict | attr-dict-with-keyword
    name: str
    anchor: bool = False


@dataclass
class TypeDir:
    arg: object


@dataclass
class RefDir:
    arg: object


@dataclass
class FuncType:
    inputs: object
    results: object


@dataclass
class Custom:
    name: str
    args: list


@dataclass
class Optional_:
    elems: list
    else_elems: list


_TOK = re.compile(r"\s*(?:`([^`]*)`|\$(\w+)|(attr-dict-with-keyword|attr-dict|functional-type|"
                  r"operands|results|regions|successors|type|ref|custom)|(<)(\w+)(>)|([()^,?:]))")


def compile_format(fmt: str) -> list:
    toks = []
    pos = 0
    while pos < len(fmt):
        m = _TOK.match(fmt, pos)
        if not m:
            if fmt[pos:].strip() == "":
                break
            raise ValueError(f"bad format near {fmt[pos:pos + 20]!r}")
        pos = m.end()
        if m.group(1) is not None:
            toks.append(("lit", m.group(1)))
        elif m.group(2):
            toks.append(("var", m.group(2)))
        elif m.group(3):
            toks.append(("kw", m.group(3)))
        elif m.group(4):
            toks.append(("angle", m.group(5)))
        else:
            toks.append(("p", m.group(7)))
    elems, i = _parse_elems(toks, 0, top=True)
    return elems


def _parse_arg(toks, i):
    kind, v = toks[i]
    if kind == "var":
        return Var(v), i + 1
    if kind == "kw" and v in ("operands", "results"):
        return Kw(v), i + 1
    if kind == "kw" and v in ("type", "ref"):
        assert toks[i + 1] == ("p", "(")
        inner, j = _parse_arg(toks, i + 2)
        assert toks[j] == ("p", ")")
        return (TypeDir(inner) if v == "type" else RefDir(inner)), j + 1
    raise ValueError(f"bad directive argument {toks[i]}")


def _parse_elems(toks, i, top=False):
    elems = []
    while i < len(toks):
        kind, v = toks[i]
        if kind == "p" and v == ")":
            return elems, i
        if kind == "p" and v == "^":
            elems[-1].anchor = True
            i += 1
            continue
        if kind == "lit":
            elems.append(Lit(v))
            i += 1
        elif kind == "var":
            elems.append(Var(v))
            i += 1
        elif kind == "kw":
            if v in ("type", "ref"):
                a, i = _parse_arg(toks, i)
                elems.append(a)
            elif v == "functional-type":
                assert toks[i + 1] == ("p", "(")
                a, j = _parse_arg(toks, i + 2)
                assert toks[j] == ("p", ",")
                b, j = _parse_arg(toks, j + 1)
                assert toks[j] == ("p", ")")
                elems.append(FuncType(a, b))
                i = j + 1
            elif v == "custom":
                name = toks[i + 1][1]
                assert toks[i + 2] == ("p", "(")
                args = []
                j = i + 3
                while toks[j] != ("p", ")"):
                    a, j = _parse_arg(toks, j)
                    args.append(a)
                    if toks[j] == ("p", ","):
                        j += 1
                elems.append(Custom(name, args))
                i = j + 1
            else:
                elems.append(Kw(v))
                i += 1
        elif kind == "p" and v == "(":
            inner, j = _parse_elems(toks, i + 1)
            assert toks[j] == ("p", ")")
            j += 1
            else_elems = []
            if toks[j] == ("p", ":"):
                assert toks[j + 1] == ("p", "(")
                else_elems, j = _parse_elems(toks, j + 2)
                j += 1
            assert toks[j] == ("p", "?"), toks[j]
            elems.append(Optional_(inner, else_elems))
            i = j + 1
        else:
            raise ValueError(f"unexpected {toks[i]} in format")
    return elems, i


@lru_cache(maxsize=None)
def format_for(op_name: str):
    """The compiled format of an op, or None when it has no spec'd pretty form."""
    if not _spec.has_op(op_name):
        return None
    s = _spec.op(op_name).syntax
    if not s.format:
        return None
    return compile_format(s.format)


_KINDS_CACHE: dict = {}


def _kinds(op_spec) -> dict:
    """name -> (kind, spec entry) for an op's operands, attributes, regions and results
    (the first declaration of a name wins, as in the spec's lookup order)."""
    d = _KINDS_CACHE.get(op_spec.name)
    if d is None:
        d = {}
        for kind, entries in (("result", op_spec.results), ("region", op_spec.regions),
                              ("attr", op_spec.attributes), ("operand", op_spec.operands)):
            for e in entries:
                d[e.name] = (kind, e)
        _KINDS_CACHE[op_spec.name] = d
    return d


def _kind_of(op_spec, name):
    r = _kinds(op_spec).get(name)
    if r is None:
        raise KeyError(f"format of {op_spec.name} names unknown variable ${name}")
    return r


def _is_variadic_key(op_spec, key):
    if key in ("operands", "results"):
        return True
    r = _kinds(op_spec).get(key[1:])
    if r is None:
        return False
    s = r[1]
    return getattr(s, "variadic", False) or getattr(s, "optional", False)


def _type_key(arg):
    if isinstance(arg, TypeDir):
        arg = arg.arg
    if isinstance(arg, Kw):
        return arg.name
    return "$" + arg.name
