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


def _both(text, monkeypatch):
    fast = _outcome(text)
    with monkeypatch.context() as mp:
        mp.setattr(_parser, "_FAST_HEAD", re.compile("(?!)"))
        mp.setattr(_parser, "_CACHE_PROPS", False)
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
    # func.func and return; both adds take the fast path (their type is known from the signature)
    assert len(calls) == 2
    calls.clear()
    dot = ('  %{} = "stablehlo.dot_general"(%a, %a) <{{dot_dimension_numbers = #stablehlo.dot<'
           'lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>}}> : '
           '(tensor<4xf32>, tensor<4xf32>) -> tensor<f32>\n')
    parse("func.func @main(%a: tensor<4xf32>) -> tensor<f32> {\n" + dot.format(0) + dot.format(1) +
          dot.format(2) + "  return %2 : tensor<f32>\n}\n")
    # the first dot_general's properties are read by the general parser, the next two repeat them
    assert len(calls) == 3


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
            mp.setattr(_parser, "_FAST_HEAD", re.compile("(?!)"))
            mp.setattr(_parser, "_CACHE_PROPS", False)
            slow = [_slots(op) for op in parse(t).op.walk()]
        assert fast == slow


@pytest.mark.parametrize("path", FILES, ids=str)
def test_corpus_same_with_and_without_fast_paths(path, monkeypatch):
    for i, chunk in enumerate(split_chunks((SHARED / path).read_text())):
        fast, slow = _both(chunk, monkeypatch)
        assert fast == slow, f"chunk {i}"


_HEAD = "func.func @main(%a: tensor<4xf32>, %b: tensor<4xi32>) -> tensor<4xf32> {\n" \
        "  %s = stablehlo.add %a, %a : tensor<4xf32>\n  %t = stablehlo.add %b, %b : tensor<4xi32>\n" \
        "  %d = stablehlo.constant dense<1.0> : tensor<4xf32>\n"
_TAIL = "  return %a : tensor<4xf32>\n}\n"
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
]


@pytest.mark.parametrize("line", EDGES)
def test_edges_same_with_and_without_fast_paths(line, monkeypatch):
    text = _HEAD + "  " + line + "\n" + _TAIL + "#loc9 = loc(\"z.py\":7:8)\n#al = 3 : i64\n"
    fast, slow = _both(text, monkeypatch)
    assert fast == slow


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
