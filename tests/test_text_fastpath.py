"""The parser's fast paths (stablehlo_ref/text/fastpath.py, and the reuse of a generic op's
properties when its text repeats) are an optimisation only: with
them turned off, every corpus chunk parses to the same module (same printed text, the same
op source positions and locations) or fails with the same error, and so do hand-written
spellings at the edges of what the fast paths accept."""
from __future__ import annotations

import re

import pytest

from corpus import SHARED, corpus_files
from stablehlo_ref import ParseError, parse, print_module
from stablehlo_ref.checkrun import split_chunks
from stablehlo_ref.errors import StableHLOError
from stablehlo_ref.text import parser as _parser
from stablehlo_ref.text import parse_attrs as _parse_attrs
from stablehlo_ref.text import syntax_builtin as _builtin
from stablehlo_ref.text import syntax_stablehlo as _syntax_stablehlo

CORPORA = ("testdata", "interpret", "math", "vhlo", "ops")
FILES = [f for c in CORPORA for f in corpus_files(c, "**/*.mlir")]


def _outcome(text):
    try:
        m = parse(text, "t.mlir")
    except StableHLOError as e:
        return ("error", type(e).__name__, str(e))
    ops = [(op.name, op.source, repr(op.location), op.attr_dict_source,
            [r.name for r in op.results], [str(v.type) for v in op.operands])
           for op in m.op.walk()]
    return ("ok", print_module(m), print_module(m, generic=True), ops)


def _general_only(mp):
    """every fast path and cache of the parser off (the general parser alone)"""
    mp.setattr(_parser, "_FAST_HEAD", re.compile("(?!)"))
    mp.setattr(_parser, "_CACHE_PROPS", False)
    mp.setattr(_parser, "_FAST_RETURNS", False)
    mp.setattr(_builtin, "_FAST_FUNC", False)
    mp.setattr(_parse_attrs, "_DICT_MEMO", False)
    mp.setattr(_syntax_stablehlo, "_FAST_REDUCE", False)


def _both(text, monkeypatch):
    fast = _outcome(text)
    with monkeypatch.context() as mp:
        _general_only(mp)
        slow = _outcome(text)
    return fast, slow


def test_fast_paths_are_taken(monkeypatch):
    """(so that the comparisons below compare something)"""
    text = ("func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
            "  %0 = stablehlo.add %a, %a : tensor<4xf32>\n"
            "  %1 = stablehlo.add %0, %a : tensor<4xf32>\n  return %1 : tensor<4xf32>\n}\n")
    calls = []
    orig = _parser.Parser._parse_operation_slow
    monkeypatch.setattr(_parser.Parser, "_parse_operation_slow",
                        lambda self: calls.append(1) or orig(self))
    parse(text)
    # func.func; both adds and the return take the fast path (their type is known from the signature)
    assert len(calls) == 1
    calls.clear()
    dot = ('  %{} = "stablehlo.dot_general"(%a, %a) <{{dot_dimension_numbers = #stablehlo.dot<'
           'lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>}}> : '
           '(tensor<4xf32>, tensor<4xf32>) -> tensor<f32>\n')
    parse("func.func @main(%a: tensor<4xf32>) -> tensor<f32> {\n" + dot.format(0) + dot.format(1) +
          dot.format(2) + "  return %2 : tensor<f32>\n}\n")
    # func.func and the first dot_general, whose properties the general parser reads; the next
    # two repeat them
    assert len(calls) == 2


def test_fast_paths_are_taken_by_jax_style_ops(monkeypatch):
    """the one-line spellings jax prints take the fast paths (a constant's literal too, which the
    general attribute parser reads for the fast path the first time)"""
    text = ("func.func private @f(%a: tensor<4xf32>, %i: tensor<i32>, %w: tensor<4x4xf32>) -> (tensor<4xf32>, tensor<i32>) {\n"
            "  %c = stablehlo.constant dense<0> : tensor<i32>\n"
            "  %cst = stablehlo.constant dense<1.500000e+00> : tensor<4xf32>\n"
            "  %0 = stablehlo.compare LT, %i, %c, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
            "  %1 = stablehlo.compare GE, %a, %cst : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>\n"
            "  %2 = stablehlo.select %1, %a, %cst : tensor<4xi1>, tensor<4xf32>\n"
            "  %3 = stablehlo.iota dim = 0 : tensor<4xi32>\n"
            "  %4 = stablehlo.convert %3 : (tensor<4xi32>) -> tensor<4xf32>\n"
            "  %5 = stablehlo.slice %4 [1:3] : (tensor<4xf32>) -> tensor<2xf32>\n"
            "  %6 = stablehlo.dot_general %w, %2, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : "
            "(tensor<4x4xf32>, tensor<4xf32>) -> tensor<4xf32>\n"
            "  %7 = call @g(%6) : (tensor<4xf32>) -> tensor<4xf32>\n"
            "  %8 = func.call @g(%7) : (tensor<4xf32>) -> tensor<4xf32>\n"
            "  %9:2 = call @h(%i) : (tensor<i32>) -> (tensor<i32>, tensor<i32>)\n"
            "  return %8, %9#1 : tensor<4xf32>, tensor<i32>\n}\n"
            "func.func private @g(%a: tensor<4xf32>) -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}\n"
            "func.func private @h(%a: tensor<i32>) -> (tensor<i32>, tensor<i32>) {\n  return %a, %a : tensor<i32>, tensor<i32>\n}\n")
    parse(text)         # (the types into the shared type cache)
    calls = []
    orig = _parser.Parser._parse_operation_slow
    monkeypatch.setattr(_parser.Parser, "_parse_operation_slow",
                        lambda self: calls.append(self.sc.s[self.sc.pos:].split()[0]) or orig(self))
    heads = []
    orig_head = _builtin._parse_func_head
    monkeypatch.setattr(_builtin, "_parse_func_head", lambda p, m: heads.append(1) or orig_head(p, m))
    m = parse(text)
    assert calls == ["func.func"] * 3
    assert len(heads) == 3
    with monkeypatch.context() as mp:
        _general_only(mp)
        assert print_module(parse(text), generic=True) == print_module(m, generic=True)


def _slots(op):
    out = {}
    for k in type(op).__slots__:
        v = getattr(op, k)
        if k == "operands":
            v = [(x.name, x.type, x.index) for x in v]
        elif k == "results":
            v = [(x.name, x.type, x.index, x.owner is op, type(x)) for x in v]
        elif k == "regions":
            v = len(v)
        out[k] = (type(v), v)
    return out


def test_fast_ops_are_what_the_general_parser_builds(monkeypatch):
    """every slot of every op (and its results) the same, in the pretty and the generic form"""
    text = ("func.func @main(%a: tensor<4xf32>, %w: tensor<4x4xf32>) -> tensor<4xf32> {\n"
            "  %c = stablehlo.constant dense<1.0> : tensor<4xf32>\n"
            "  %0 = stablehlo.add %a, %a : tensor<4xf32> loc(\"a.py\":1:2)\n"
            "  %1 = stablehlo.tanh %0 : tensor<4xf32>\n"
            "  %c2 = stablehlo.constant dense<1.0> : tensor<4xf32> loc(#loc9)\n"
            "  %2 = stablehlo.dot_general %1, %w, contracting_dims = [0] x [0] : "
            "(tensor<4xf32>, tensor<4x4xf32>) -> tensor<4xf32>\n"
            "  %3 = stablehlo.dot_general %2, %w, contracting_dims = [0] x [0] : "
            "(tensor<4xf32>, tensor<4x4xf32>) -> tensor<4xf32>\n"
            "  %4 = stablehlo.broadcast_in_dim %3, dims = [0] : (tensor<4xf32>) -> tensor<4xf32>\n"
            "  return %4 : tensor<4xf32>\n}\n#loc9 = loc(\"z.py\":7:8)\n")
    for t in (text, print_module(parse(text), generic=True)):
        fast = [_slots(op) for op in parse(t).op.walk()]
        with monkeypatch.context() as mp:
            _general_only(mp)
            slow = [_slots(op) for op in parse(t).op.walk()]
        assert fast == slow


@pytest.mark.parametrize("path", FILES, ids=str)
def test_corpus_same_with_and_without_fast_paths(path, monkeypatch):
    for i, chunk in enumerate(split_chunks((SHARED / path).read_text())):
        fast, slow = _both(chunk, monkeypatch)
        assert fast == slow, f"chunk {i}"


_HEAD = "func.func @main(%a: tensor<4xf32>, %b: tensor<4xi32>, %p: tensor<4xi1>) -> tensor<4xf32> {\n" \
        "  %s = stablehlo.add %a, %a : tensor<4xf32>\n  %t = stablehlo.add %b, %b : tensor<4xi32>\n" \
        "  %d = stablehlo.constant dense<1.0> : tensor<4xf32>\n"
_TAIL = "  return %a : tensor<4xf32>\n}\nfunc.func private @g(%a: tensor<4xf32>) -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}\n"
_DOT = ('%x = "stablehlo.dot_general"(%a, %a) <{dot_dimension_numbers = #stablehlo.dot<BODY>}> : '
        '(tensor<4xf32>, tensor<4xf32>) -> tensor<f32>')
EDGES = [
    "%x = stablehlo.add %a, %b : tensor<4xf32>",                 # type mismatch
    "%x = stablehlo.add %a, %nope : tensor<4xf32>",              # undefined value
    "%s = stablehlo.add %a, %a : tensor<4xf32>",                 # redefinition
    "%x = stablehlo.add %a, %a {foo = 1 : i64} : tensor<4xf32>",
    "%x = stablehlo.add %a, // c\n %a : tensor<4xf32>",
    "%x = stablehlo.add %a,%a:tensor<4xf32>",
    "%x = stablehlo.add %a, %a : tensor<4xf32> loc(\"f.py\":3:4)",
    "%x = stablehlo.add %a, %a : tensor<4xf32> loc(\"f.py\":3:4 to 5:6)",
    "%x = stablehlo.add %a, %a : tensor<4xf32> loc(#loc9)",
    "%x = stablehlo.add %a, %a : tensor<4xf32> loc(\"n\")",
    "%x = stablehlo.add %a, %a : tensor<4xf32> loc(",
    "%x = stablehlo.add %a, %a : tensor<4xf32> // trailing\n",
    "%x = stablehlo.add %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>",
    "%x = stablehlo.add %a, %a : tensor<4xf32>, %a",
    "%x = stablehlo.add %a : tensor<4xf32>",
    "%x = stablehlo.tanh %a : tensor<4xf32>",
    "%x = stablehlo.tanh %a#0 : tensor<4xf32>",
    "%x:2 = stablehlo.tanh %a : tensor<4xf32>",
    "%x = stablehlo.convert %b : (tensor<4xi32>) -> tensor<4xf32>",
    "%x = stablehlo.broadcast_in_dim %a, dims = [0] : (tensor<4xf32>) -> tensor<2x4xf32>",
    "%x = stablehlo.broadcast_in_dim %a, dims = [1] : (tensor<4xf32>) -> tensor<4xf32>",
    "%x = stablehlo.broadcast_in_dim %a, dims = [99999999999999999999] : (tensor<4xf32>) -> tensor<4xf32>",
    "%x = stablehlo.broadcast_in_dim %a, dims = [0,] : (tensor<4xf32>) -> tensor<4xf32>",
    "%x = stablehlo.broadcast_in_dim %a, dimsx = [0] : (tensor<4xf32>) -> tensor<4xf32>",
    "%x = stablehlo.reshape %a : (tensor<4xf32>) -> tensor<4xf32>",
    "%x = stablehlo.reshape %a : (tensor<4xf32>) -> (tensor<4xf32>)",
    "%x = stablehlo.reshape %a, %a : (tensor<4xf32>) -> tensor<4xf32>",
    "%x = stablehlo.reshape %a : (tensor<4xf32>) -> tensor<4xf32> -> tensor<4xf32>",
    "%x = stablehlo.dot_general %a, %a, contracting_dims = [0] x [0] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>",
    "%x = stablehlo.dot_general %a, %a, batching_dims = [0] x [0], contracting_dims = [] x [] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>",
    "%x = stablehlo.dot_general %a, %a, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>",
    "%x = stablehlo.dot_general %a, %a, contracting_dims = [0]x[0] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>",
    "%x = stablehlo.dot_general %a, %a, contracting_dims = [0] x [0] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi32>",
    "%x = stablehlo.constant dense<1.0> : tensor<4xf32>",
    "%x = stablehlo.constant dense<1.0> : tensor<4xi32>",
    "%x = stablehlo.constant dense<1.0 > : tensor<4xf32>",
    "%x = stablehlo.constant dense<1.0> : tensor<4xf32> loc(\"c.py\":1:2)",
    "%x = stablehlo.constant {a = 1} dense<1.0> : tensor<4xf32>",
    "%x = stablehlo.add %a, %a : tensor<4xf32>\n  %x = stablehlo.add %a, %a : tensor<4xf32>",
    "%x = stablehlo.add %a, %y : tensor<4xf32>\n  %y = stablehlo.add %a, %a : tensor<4xf32>",
    "%x = stablehlo.add %a, %a : tensor<4xf32> %y = stablehlo.add %x, %x : tensor<4xf32>",
    "%x = stablehlo.nope %a, %a : tensor<4xf32>",
    "%x = foo.bar %a, %a : tensor<4xf32>",
    "%x = stablehlo.add %a, %a : tensor<4xf32> }",
    '%x = "stablehlo.add"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>',
    '%x = "stablehlo.add"(%a, %b) : (tensor<4xf32>, tensor<4xi32>) -> tensor<4xf32>',
    '%x = "stablehlo.add"(%a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>',
    '%x = "stablehlo.add"(%a, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n'
    '  %y = stablehlo.add %a, %a : tensor<4xf32>',
    '%x = "stablehlo.nope"(%a) : (tensor<4xf32>) -> tensor<4xf32>',
    '%x = "foo.bar"(%a) : (tensor<4xf32>) -> tensor<4xf32>',
    '%x = "stablehlo.add"(%a, %a) {k = 1} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>',
    '%x = "stablehlo.add"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc(#loc9)',
    '%x = "stablehlo.constant"() <{value = dense<1.0> : tensor<4xf32>}> : () -> tensor<4xf32>',
    '%x = "stablehlo.constant"() <{value = dense<1.0> : tensor<4xf32>}> : () -> tensor<4xi32>',
    '%x = "stablehlo.constant"() <{value = dense<1.0> : tensor<4xf32>, foo = 1}> : () -> tensor<4xf32>',
    '%x = "stablehlo.constant"() <{value = dense<1.0> : tensor<4xf32>}> {foo = 1} : () -> tensor<4xf32>',
    '%x = "stablehlo.constant"() <{value = dense<1.0> : tensor<4xf32>}> : () -> (tensor<4xf32>)',
    '%x = "stablehlo.tanh"(%a) : (tensor<4xf32>) -> (tensor<4xf32>)',
    '%x = "stablehlo.tanh"(%a) : (tensor<4xf32>) -> ()',
    '%x = "stablehlo.tanh"(%a) : (tensor<4xf32>) -> (tensor<4xf32>) -> tensor<4xf32>',
    _DOT.replace("BODY", "lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]") + "\n  " +
    _DOT.replace("%x", "%y").replace("BODY", "lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]"),
    _DOT.replace("BODY", "lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]") + "\n  " +
    _DOT.replace("%x", "%y").replace("BODY", "lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0], x = 1"),
    _DOT.replace("BODY", "lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]") + "\n  " +
    _DOT.replace("%x", "%y").replace("BODY", "lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>}> {a = 1"),
    _DOT.replace("BODY", "lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]") + "\n  " +
    _DOT.replace("%x", "%y").replace("BODY", "lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>, b = #al"),
] + [_DOT.replace("BODY", "lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]") + "\n  " +
     _DOT.replace("%x", "%y").replace("BODY", "lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]")
     .replace(" : (", tail) for tail in (
         " {a = 1} : (", " ({\n}) : (", " // c\n : (", ":(", "\n : (", " : (tensor<4xf32>) -> tensor<f32> //", " [^bb1] : (",
         " loc(#loc9) : (", " : () -> () //")] + [
    _DOT.replace("BODY", "lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]") + "\n  " +
    _DOT.replace("%x", "%y").replace("(%a, %a)", "(%a, %s)").replace("BODY", "lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]"),
    _DOT.replace("BODY", "lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]") + "\n  " +
    _DOT.replace("%x", "%y").replace("(%a, %a)", "(%a, %b)").replace("BODY", "lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]"),
    _DOT.replace("BODY", "lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]") + "\n  " +
    _DOT.replace("%x", "%y").replace("(%a, %a)", "(%a, %z)").replace("BODY", "lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]"),
    _DOT.replace("BODY", "lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]") + "\n  " +
    _DOT.replace("%x", "%y").replace("-> tensor<f32>", "-> (tensor<f32>, tensor<f32>)").replace("BODY", "lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]"),
    _DOT.replace("BODY", "lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]") + "\n  " +
    _DOT.replace("%x", "%x").replace("BODY", "lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]"),
    '%x = "stablehlo.dot_general"(%a, %a) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [0], '
    'rhs_contracting_dimensions = [0]>}> : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>\n'
    '  %y = "stablehlo.dot_general"(%a, %a) < {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [0], '
    'rhs_contracting_dimensions = [0]>} > : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>',
    '%x = "stablehlo.tanh"(%a) <{}> : (tensor<4xf32>) -> tensor<4xf32>\n'
    '  %y = "stablehlo.tanh"(%a) <{}> : (tensor<4xf32>) -> tensor<4xf32>',
    # the fast paths' caches of type lists and attributes by their text
    "%x = stablehlo.dot_general %a, %a, contracting_dims = [0] x [0] : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>\n"
    "  %y = stablehlo.dot_general %a, %a, contracting_dims = [0] x [0] : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>\n"
    "  %z = stablehlo.dot_general %a, %a, batching_dims = [0] x [0], contracting_dims = [] x [] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n"
    "  %w = stablehlo.dot_general %a, %a, contracting_dims = [0] x [0] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>",
    "%x = stablehlo.broadcast_in_dim %a, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>\n"
    "  %y = stablehlo.broadcast_in_dim %a, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>\n"
    "  %z = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<4xf32>) -> tensor<2x4xf32>",
    # enum and integer attributes, optional groups, slice ranges, precision, select, call, return
    "%x = stablehlo.compare LT, %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>",
    "%x = stablehlo.compare LT, %a, %a, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>",
    "%x = stablehlo.compare LT, %a, %a,FLOAT:(tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>",
    "%x = stablehlo.compare LT, %a, %a, NOPE : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>",
    "%x = stablehlo.compare NOPE, %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>",
    "%x = stablehlo.compare LT, %a, %a, : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>",
    "%x = stablehlo.compare LT, %a, %a, FLOAT, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>",
    "%x = stablehlo.compare #stablehlo<comparison_direction LT>, %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>",
    "%x = stablehlo.compare LT, %a, %b, SIGNED : (tensor<4xf32>, tensor<4xi32>) -> tensor<4xi1>",
    "%x = stablehlo.compare LT, %a, %a, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>\n"
    "  %y = stablehlo.compare LT, %s, %a, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>\n"
    "  %z = stablehlo.compare LT, %t, %b, FLOAT : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>",
    "%x = stablehlo.iota dim = 0 : tensor<4xf32>",
    "%x = stablehlo.iota dim = -1 : tensor<4xf32>",
    "%x = stablehlo.iota dim = 99999999999999999999 : tensor<4xf32>",
    "%x = stablehlo.iota dim = 0x1 : tensor<4xf32>",
    "%x = stablehlo.iota dim = 0 {a = 1} : tensor<4xf32>",
    "%x = stablehlo.slice %a [0:2] : (tensor<4xf32>) -> tensor<2xf32>",
    "%x = stablehlo.slice %a [0:4:2] : (tensor<4xf32>) -> tensor<2xf32>",
    "%x = stablehlo.slice %a [0:] : (tensor<4xf32>) -> tensor<2xf32>",
    "%x = stablehlo.slice %a [0:2, 1:3] : (tensor<4xf32>) -> tensor<2xf32>",
    "%x = stablehlo.slice %a [99999999999999999999:2] : (tensor<4xf32>) -> tensor<2xf32>",
    "%x = stablehlo.slice %a [0:2]: (tensor<4xf32>) -> tensor<2xf32>\n"
    "  %y = stablehlo.slice %a [0:2] : (tensor<4xf32>) -> tensor<2xf32>",
    "%x = stablehlo.select %p, %a, %a : tensor<4xi1>, tensor<4xf32>",
    "%x = stablehlo.select %p, %a, %a : tensor<4xi1>, tensor<4xf32>, tensor<4xf32>",
    "%x = stablehlo.select %p, %a, %b : tensor<4xi1>, tensor<4xf32>",
    "%x = stablehlo.select %p, %a, %a : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>",
    "%x = stablehlo.select %p, %a, %a : tensor<4xf32>, tensor<4xf32>",
    "%x = stablehlo.dot_general %a, %a, contracting_dims = [0] x [0], precision = [DEFAULT, HIGHEST] : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>",
    "%x = stablehlo.dot_general %a, %a, contracting_dims = [0] x [0], precision = [DEFAULT, NOPE] : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>",
    "%x = stablehlo.dot_general %a, %a, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT], "
    "algorithm = <lhs_precision_type = f32, rhs_precision_type = f32, accumulation_type = f32, lhs_component_count = 1, "
    "rhs_component_count = 1, num_primitive_operations = 1, allow_imprecise_accumulation = false> : "
    "(tensor<4xf32>, tensor<4xf32>) -> tensor<f32>",
    "%x = stablehlo.dot_general %a, %a, contracting_dims = [0] x [0], precision = [DEFAULT] : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>",
    "%x = stablehlo.dot_general %a, %a, contracting_dims = [0] x [0],precision=[DEFAULT,DEFAULT]: (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>",
    "%x = stablehlo.convert %b : (tensor<4xi32>) -> tensor<4xf32>",
    "%x = stablehlo.convert %b : (tensor<4xf32>) -> tensor<4xf32>",
    "%x = stablehlo.convert %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xf32>",
    "%x = stablehlo.convert %b : (tensor<4xi32>) -> (tensor<4xf32>, tensor<4xf32>)",
    "%x = stablehlo.convert %b : (tensor<4xi32>) -> (tensor<4xf32>)",
    "%x = stablehlo.add %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>",
    "%x = stablehlo.constant dense<2.5> : tensor<4xf32>",
    "%x = stablehlo.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>",
    "%x = stablehlo.constant dense<[1.0, 2.0]> : tensor<4xf32>",
    "%x = stablehlo.constant dense<1.0e+999> : tensor<4xf32>",
    "%x = stablehlo.constant dense<0x7FC00000> : tensor<4xf32>",
    "%x = stablehlo.constant dense<0x7FC0> : tensor<4xf32>",
    "%x = stablehlo.constant dense<7> : tensor<4xi32>",
    "%x = stablehlo.constant dense<7.5> : tensor<4xi32>",
    "%x = stablehlo.constant dense<true> : tensor<4xi32>",
    "%x = stablehlo.constant dense<300> : tensor<4xi8>",
    "%x = stablehlo.constant dense<3> : tensor<4xf32>",
    "%x = call @g(%a) : (tensor<4xf32>) -> tensor<4xf32>",
    "%x = func.call @g(%a) : (tensor<4xf32>) -> tensor<4xf32>",
    "%x = call @g(%a, %b) : (tensor<4xf32>, tensor<4xi32>) -> tensor<4xf32>",
    "%x = call @g(%a) : (tensor<4xi32>) -> tensor<4xf32>",
    "%x = call @g(%a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>",
    "%x = call @g(%a) {k = 1} : (tensor<4xf32>) -> tensor<4xf32>",
    "%x = call @g(%a) : (tensor<4xf32>) -> (tensor<4xf32>)",
    "%x = call @g(%a) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)",
    "%x:2 = call @g(%a) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)",
    "%x = call @g::@h(%a) : (tensor<4xf32>) -> tensor<4xf32>",
    '%x = call @"g"(%a) : (tensor<4xf32>) -> tensor<4xf32>',
    "%x = call @g(%nope) : (tensor<4xf32>) -> tensor<4xf32>",
    "%x = call @g() : () -> tensor<4xf32>",
    "%x = call@g(%a):(tensor<4xf32>)->tensor<4xf32>",
    "%x:2 = call @g(%a) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi32>)\n"
    "  %y = stablehlo.add %x#1, %x#1 : tensor<4xi32>\n  %z = stablehlo.add %x, %x#0 : tensor<4xf32>",
    "%x:2 = func.call @g(%a) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi32>)\n"
    "  %y = stablehlo.add %x#1, %x : tensor<4xi32>",
    "%x:3 = call @g(%a) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)",
    "%x:1 = call @g(%a) : (tensor<4xf32>) -> (tensor<4xf32>)",
    "%x:02 = call @g(%a) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)",
    "%s:2 = call @g(%a) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)",
    "%x:2 = call @g(%a) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)\n"
    "  %x#1 = stablehlo.add %a, %a : tensor<4xf32>",
    "%x:2 = call @g(%a) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) loc(\"c.py\":1:2)",
    "%x:2 = call @g(%b) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)",
    "%x:2 = call @g(%a) {k = 1} : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)",
    "%x:2 = call @g(%y) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)\n  %y = stablehlo.add %a, %a : tensor<4xf32>",
    "%x:2 = call @g(%a) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) // c\n  %y = stablehlo.add %a, %a : tensor<4xf32>",
    "%x:2 = call @g(%a) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) // c\n  loc(\"c.py\":1:2)",
    "%x:2 = call @g(%a) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)\n  loc(#loc9)",
    "%x:2 = call @g(%a) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) %y = stablehlo.add %a, %a : tensor<4xf32>",
    # reduce's compact form
    "%c0 = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "  %x = stablehlo.reduce(%a init: %c0) applies stablehlo.add across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>",
    "%c0 = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "  %x = stablehlo.reduce(%a init: %c0) applies stablehlo.maximum across dimensions = [] : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>",
    "%c0 = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "  %x = stablehlo.reduce(%a init: %c0) applies add across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>",
    "%c0 = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "  %x = stablehlo.reduce(%a init: %c0) applies stablehlo.subtract across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>",
    "%c0 = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "  %x = stablehlo.reduce(%a init: %c0) applies stablehlo.add across dimensions = [0] : (tensor<4xf32>, tensor<i32>) -> tensor<f32>",
    "%c0 = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "  %x = stablehlo.reduce(%a init: %c0) applies stablehlo.add across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32> loc(\"r.py\":3:4)",
    "%c0 = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "  %x = stablehlo.reduce(%a init: %c0) applies stablehlo.add across dimensions = [0] {k = 1} : (tensor<4xf32>, tensor<f32>) -> tensor<f32>",
    "%c0 = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "  %x = stablehlo.reduce(%a init: %c0) applies stablehlo.add across dimensions = [99999999999999999999] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>",
    "%c0 = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "  %x:2 = stablehlo.reduce(%a init: %c0), (%a init: %c0) applies stablehlo.add across dimensions = [0] : "
    "(tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>)",
    "%x = stablehlo.reduce(%a init: %nope) applies stablehlo.add across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>",
    "%c0 = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "  %x = stablehlo.reduce(%a init: %c0) applies stablehlo.add across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> (tensor<f32>, tensor<f32>)",
]

# the function's last line: the fast path of `return` against the general parser
RETURNS = [
    "return %a : tensor<4xf32>", "return %a, %a : tensor<4xf32>, tensor<4xf32>", "return %a : tensor<4xi32>",
    "return %b : tensor<4xf32>", "return %a, %a : tensor<4xf32>", "return %a : tensor<4xf32>, tensor<4xf32>",
    "return %nope : tensor<4xf32>", "return %a : tensor<4xf32> loc(\"r.py\":1:2)", "return %a : tensor<4xf32> // c",
    "return %a :tensor<4xf32>", "return%a : tensor<4xf32>", "func.return %a : tensor<4xf32>",
    "stablehlo.return %a : tensor<4xf32>", "return %a : tensor<4xf32>\n  %z = stablehlo.add %a, %a : tensor<4xf32>",
    "return {k = 1} %a : tensor<4xf32>", "return", "returnx %a : tensor<4xf32>", "return %a#0 : tensor<4xf32>",
]

# whole modules: the fast path of a function's header against the general parser
FUNCS = [
    "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}\n",
    "func.func public @f(%a: tensor<4xf32>, %b: tensor<i32>) -> (tensor<4xf32>, tensor<i32>) {\n"
    "  return %a, %b : tensor<4xf32>, tensor<i32>\n}\n",
    "func.func private @f() {\n  return\n}\n",
    "func.func nested @f() -> () {\n  return\n}\n",
    "func.func @f(%a: tensor<4xf32>) -> (tensor<4xf32> {jax.result_info = \"r\"}) {\n  return %a : tensor<4xf32>\n}\n",
    "func.func @f(%a: tensor<4xf32> {k = 1}) -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}\n",
    "func.func @f(%a: tensor<4xf32> loc(\"a\")) -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}\n",
    "func.func @f(%a: tensor<4xf32>, %a: tensor<4xf32>) -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}\n",
    "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> attributes {k = 1} {\n  return %a : tensor<4xf32>\n}\n",
    "func.func @f(%a: tensor<4xf32>) -> (tensor<4xf32>) -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}\n",
    "func.func @f(tensor<4xf32>) -> tensor<4xf32>\n",
    "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32>\n",
    "func.func @f(%a: tensor<4xnope>) -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}\n",
    "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}\n"
    "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}\n",
    "func.func publicx @f() {\n  return\n}\n",
    "func.func public@f(%a:tensor<4xf32>)->tensor<4xf32>{\n  return %a : tensor<4xf32>\n}\n",
    "module {\n  func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n    %0 = call @f(%a) : (tensor<4xf32>) -> tensor<4xf32>\n"
    "    return %0 : tensor<4xf32>\n  }\n}\n",
    # result attributes (jax's main)
    "func.func public @main(%a: tensor<4xf32>) -> (tensor<4xf32> {jax.result_info = \"result[0]\"}, tensor<4xf32> "
    "{jax.result_info = \"result[1]\"}) {\n  return %a, %a : tensor<4xf32>, tensor<4xf32>\n}\n",
    "func.func public @main(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32> {k = 1 : i32, u}) {\n"
    "  return %a, %a : tensor<4xf32>, tensor<4xf32>\n}\n",
    "func.func public @main(%a: tensor<4xf32>) -> (tensor<4xf32> {}, tensor<4xf32> {}) {\n"
    "  return %a, %a : tensor<4xf32>, tensor<4xf32>\n}\n",
    "func.func public @main(%a: tensor<4xf32>) -> (tensor<4xf32> {k = 1, k = 2}) {\n  return %a : tensor<4xf32>\n}\n",
    "func.func public @main(%a: tensor<4xf32>) -> (tensor<4xf32> {k = }) {\n  return %a : tensor<4xf32>\n}\n",
    "func.func public @main(%a: tensor<4xf32>) -> (tensor<4xf32> {k = \"}\"}) {\n  return %a : tensor<4xf32>\n}\n",
    "func.func public @main(%a: tensor<4xf32>) -> (tensor<4xf32> {k = {j = 1}}) {\n  return %a : tensor<4xf32>\n}\n",
    "func.func public @main(%a: tensor<4xf32>) -> (tensor<4xf32> {k = #al}) {\n  return %a : tensor<4xf32>\n}\n",
    "#al = 3 : i64\nfunc.func public @main(%a: tensor<4xf32>) -> (tensor<4xf32> {k = #al}) {\n  return %a : tensor<4xf32>\n}\n",
    "func.func public @main(%a: tensor<4xf32>) -> tensor<4xf32> {k = 1} {\n  return %a : tensor<4xf32>\n}\n",
    "func.func public @main(%a: tensor<4xf32>) -> (tensor<4xf32> {k = 1}) -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}\n",
]


@pytest.mark.parametrize("line", EDGES)
def test_edges_same_with_and_without_fast_paths(line, monkeypatch):
    text = _HEAD + "  " + line + "\n" + _TAIL + "#loc9 = loc(\"z.py\":7:8)\n#al = 3 : i64\n"
    fast, slow = _both(text, monkeypatch)
    assert fast == slow


@pytest.mark.parametrize("line", RETURNS)
def test_returns_same_with_and_without_fast_paths(line, monkeypatch):
    text = _HEAD.replace("tensor<4xf32> {", "(tensor<4xf32>, tensor<4xf32>) {", 1) + "  " + line + "\n}\n"
    fast, slow = _both(text, monkeypatch)
    assert fast == slow


_CC = '  %{r} = stablehlo.custom_call @g(%a) {{backend_config = "", mhlo.frontend_attributes = {{n = "0"}}{extra}}} : (tensor<4xf32>) -> tensor<4xf32>\n'
# attribute dictionaries remembered by their text (parse_attr_dict_body) against the general parser
DICTS = [
    "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n" + _CC.format(r=0, extra="") + _CC.format(r=1, extra="") +
    _CC.format(r=2, extra=", k = 1 : i64") + _CC.format(r=3, extra="") + _CC.format(r=4, extra=", k = 1 : i64") +
    _CC.format(r=5, extra=", k = 2 : i64") + "  return %5 : tensor<4xf32>\n}\n",
    "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n" + _CC.format(r=0, extra=", k = #loc5") +
    _CC.format(r=1, extra=", k = #loc5") + "  return %1 : tensor<4xf32>\n}\n#loc5 = loc(\"x.py\":1:2)\n",
    "#al = 1 : i64\nfunc.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n" + _CC.format(r=0, extra=", k = #al") +
    "  return %0 : tensor<4xf32>\n}\n#al = 2 : i64\nfunc.func @g(%a: tensor<4xf32>) -> tensor<4xf32> {\n" +
    _CC.format(r=0, extra=", k = #al") + "  return %0 : tensor<4xf32>\n}\n",
    "#al = {long_attribute_name_number_one = 1 : i64, long_attribute_name_number_two = #al}\n",
    "#loc1 = {long_attribute_name_number_one = 1 : i64, long_attribute_name_number_two = #loc1}\n"
    "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %0 = stablehlo.custom_call @g(%a) {long_attribute_name_number_one = 1 : i64, long_attribute_name_number_two = #loc1}"
    " : (tensor<4xf32>) -> tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n",
    "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n" + _CC.format(r=0, extra=", k = 1 : i64, k = 2 : i64") +
    "  return %0 : tensor<4xf32>\n}\n",
    "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n" + _CC.format(r=0, extra="") +
    _CC.format(r=1, extra="").replace("}} :", "}} {k = 1} :") + "  return %1 : tensor<4xf32>\n}\n",
]


@pytest.mark.parametrize("text", DICTS)
def test_dictionaries_same_with_and_without_memo(text, monkeypatch):
    fast, slow = _both(text, monkeypatch)
    assert fast == slow


@pytest.mark.parametrize("text", FUNCS)
def test_functions_same_with_and_without_fast_paths(text, monkeypatch):
    fast, slow = _both(text, monkeypatch)
    assert fast == slow


def test_long_lists_that_fail_late_parse(monkeypatch):
    """a function header, call and return with many multi-dimensional types where the fast
    path's regex fails only at the end (a result attribute, an attribute dictionary, a
    location): each type matches the regex in one way, so the failed match backtracks in
    polynomial time (this parse took hours with a type regex that matched `4x4xf32` in three)"""
    n = 40
    t = "tensor<4x4x4x4xf32>"
    args = ", ".join(f"%a{i}: {t}" for i in range(n))
    names = ", ".join(f"%a{i}" for i in range(n))
    types = ", ".join([t] * n)
    text = (f"func.func @f({args}) -> ({t} {{k = 1}}) {{\n"
            f"  %0 = call @g({names}) {{k = 1}} : ({types}) -> {t}\n"
            f"  %1 = call @g({names}) : ({types}) -> ({types}) -> {t}\n"
            f"  return {names} : {types} loc(\"x\")\n}}\n"
            f"func.func private @g({args}) -> {t}\n")
    fast, slow = _both(text, monkeypatch)
    assert fast[0] == "ok" and fast == slow


def _model_keys():
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
    try:
        import models
    except ImportError:
        return []
    return list(models.PROGRAMS)


@pytest.mark.parametrize("key", _model_keys())
def test_jax_programs_same_with_and_without_fast_paths(key, monkeypatch):
    """bench/models.py's programs as jax lowers them (bench_parse.py --models times these)"""
    pytest.importorskip("jax")
    import os
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import models
    try:
        _, fn, args = models.PROGRAMS[key]()
    except ImportError as e:            # (flax, optax or equinox not installed)
        pytest.skip(str(e))
    text = models.lower(fn, args)
    parse(text)                         # (its types into the shared type cache, as a second parse finds them)
    fast, slow = _both(text, monkeypatch)
    assert fast[0] == "ok"
    assert fast == slow
    m = parse(text)
    with monkeypatch.context() as mp:
        _general_only(mp)
        g = parse(text)
    assert [_slots(op) for op in m.op.walk()] == [_slots(op) for op in g.op.walk()]


def test_location_aliases_resolved():
    """(the parser resolves `#loc` references after the module only where it made some)"""
    from stablehlo_ref.ir.attributes import CallSiteLoc, FileLineColLoc, FusedLoc, NameLoc
    head = "func.func @main(%a: tensor<4xf32> loc(#loc2)) -> tensor<4xf32> {\n  %x = stablehlo.add %a, %a : tensor<4xf32> "
    tail = "\n  return %a : tensor<4xf32>\n}\n#loc9 = loc(\"z.py\":7:8)\n#loc8 = loc(#loc9)\n#loc2 = loc(\"q\")\n"
    z = FileLineColLoc("z.py", 7, 8)
    for loc, want in (('loc("n"(#loc9))', NameLoc("n", z)), ('loc(fused[#loc9, "a"])', FusedLoc((z, NameLoc("a")))),
                      ("loc(callsite(#loc9 at #loc8))", CallSiteLoc(z, z)), ("loc(#loc8)", z)):
        m = parse(head + loc + tail)
        func = m.op.regions[0].blocks[0].operations[0]
        block = func.regions[0].blocks[0]
        assert block.operations[0].location == want
        assert block.arg_locations == [NameLoc("q")]
    with pytest.raises(ParseError, match="undefined location alias #nope"):
        parse(head + "loc(#nope)" + tail)
