"""Verifiers of the elementwise ops: arithmetic and bitwise binary ops, abs, real/imag, complex,
is_finite, convert, compare, select, clamp, bitcast_convert and reduce_precision."""
from __future__ import annotations

from ..ir.attributes import EnumAttr
from ..ir.types import ElementType, QuantizedType, TensorType
from . import quantized
from .registry import verifier
from .shapes import (dim_ok, elem, elems_equal, int_value, is_pred, is_quantized, ranked, same_type_traits,
                     shape_matches, shapes_compatible, types_compatible)


def _binary(op, check, same, quant, storage, expressed, per_axis):
    """The shared checks of the elementwise binary ops, each reported under the id the verified
    op's spec entry gives it (`per_axis` is the ids of the per-axis rules, result, lhs, rhs)."""
    lhs, rhs, res = op.operands[0].type, op.operands[1].type, op.results[0].type
    types = f"got {lhs}, {rhs}, {res}"
    check(shapes_compatible(lhs, rhs) and shapes_compatible(lhs, res), same,
          f"operands and result must have the same shape ({types})")
    if not (is_quantized(lhs) or is_quantized(rhs) or is_quantized(res)):
        check(elems_equal(lhs, rhs) and elems_equal(lhs, res), same,
              f"operands and result must have the same type ({types})")
    else:
        check(is_quantized(lhs) and is_quantized(rhs) and is_quantized(res), quant,
              f"with quantization, operands and result must all be quantized ({types})")
        el, er, eo = elem(lhs), elem(rhs), elem(res)
        check(el.storage_type == er.storage_type == eo.storage_type, storage,
              f"operands and result must share a storage type ({types})")
        check(el.expressed_type == er.expressed_type == eo.expressed_type, expressed,
              f"operands and result must share an expressed type ({types})")
        quantized.check_binary(check, lhs, rhs, res, *per_axis)


@verifier("stablehlo.add")
def add(op, check):
    _binary(op, check, "C1", "C2", "C3", "C4", ("C5", "C6", "C7"))


@verifier("stablehlo.subtract", "stablehlo.multiply", "stablehlo.divide", "stablehlo.maximum",
          "stablehlo.minimum", "stablehlo.atan2", "stablehlo.power", "stablehlo.remainder")
def binary_arith(op, check):
    """Their spec entries state all of add's rules as one: C1, the operands and the result have
    the same baseline type."""
    _binary(op, check, "C1", "C1", "C1", "C1", ("C1", "C1", "C1"))


_BOOL_INT = ("stablehlo.and", "stablehlo.or", "stablehlo.xor", "stablehlo.not", "stablehlo.popcnt",
             "stablehlo.count_leading_zeros", "stablehlo.shift_left", "stablehlo.shift_right_arithmetic",
             "stablehlo.shift_right_logical")


@verifier(*_BOOL_INT)
def bitwise(op, check):
    same_type_traits(op, check, "C1")


@verifier("stablehlo.abs")
def abs_(op, check):
    a, r = op.operands[0].type, op.results[0].type
    check(shapes_compatible(a, r), "C1", f"operand and result must have the same shape (got {a}, {r})")
    ea, er = elem(a), elem(r)
    if isinstance(ea, ElementType) and ea.is_complex:
        check(isinstance(er, ElementType) and er.is_float and er.bits * 2 == ea.bits, "C2",
              f"result of complex abs must be the component float type (got {a}, {r})")
    elif not is_quantized(a):
        check(ea == er, "C2", f"operand and result must have the same element type (got {a}, {r})")


@verifier("stablehlo.real", "stablehlo.imag")
def real_imag(op, check):
    a, r = op.operands[0].type, op.results[0].type
    check(shapes_compatible(a, r), "C1", f"operand and result must have the same shape (got {a}, {r})")
    ea, er = elem(a), elem(r)
    if isinstance(ea, ElementType) and ea.is_complex:
        check(isinstance(er, ElementType) and er.is_float and er.bits * 2 == ea.bits, "C2",
              f"result must be the complex operand's component type (got {a}, {r})")
    else:
        check(ea == er, "C2", f"result must have the operand's element type (got {a}, {r})")


@verifier("stablehlo.complex")
def complex_(op, check):
    a, b, r = op.operands[0].type, op.operands[1].type, op.results[0].type
    check(types_compatible(a, b), "C1", f"lhs and rhs must have the same type (got {a}, {b})")
    check(shapes_compatible(a, r), "C2", f"result must have the operands' shape (got {a}, {r})")
    ea, er = elem(a), elem(r)
    check(isinstance(er, ElementType) and er.is_complex and er.bits == 2 * ea.bits, "C3",
          f"result element type must be complex of the operand element type (got {a}, {r})")


@verifier("stablehlo.is_finite")
def is_finite(op, check):
    a, r = op.operands[0].type, op.results[0].type
    check(shapes_compatible(a, r), "C1", f"operand and result must have the same shape (got {a}, {r})")
    check(is_pred(r), "C1", f"result must be a tensor of i1 (got {r})")


@verifier("stablehlo.convert")
def convert(op, check):
    a, r = op.operands[0].type, op.results[0].type
    check(shapes_compatible(a, r), "C1", f"operand and result must have the same shape (got {a}, {r})")


@verifier("stablehlo.compare")
def compare(op, check):
    a, b, r = op.operands[0].type, op.operands[1].type, op.results[0].type
    check(elems_equal(a, b, ignore_quant=True), "C1",
          f"lhs and rhs must have the same element type (got {a}, {b})")
    check(shapes_compatible(a, b) and shapes_compatible(a, r), "C2",
          f"lhs, rhs and result must have the same shape (got {a}, {b}, {r})")
    check(is_pred(r), "C2", f"result must be a tensor of i1 (got {r})")
    ct = op.attributes.get("compare_type")
    et = elem(a)
    if isinstance(ct, EnumAttr) and isinstance(et, ElementType):
        allowed = {"signed": ("SIGNED",), "index": ("SIGNED",), "unsigned": ("UNSIGNED",), "bool": ("UNSIGNED",),
                   "float": ("FLOAT", "TOTALORDER"), "complex": ("FLOAT",)}.get(et.kind, ())
        check(ct.value in allowed or ct.value == "TOTALORDER", "C3", f"compare_type {ct.value} does not fit element type {et}")


@verifier("stablehlo.select")
def select(op, check):
    p, t, f, r = (v.type for v in (*op.operands, op.results[0]))
    check(is_pred(p), "C1", f"pred must be a tensor of i1 (got {p})")
    check(not ranked(p) or p.rank == 0 or shapes_compatible(p, t), "C1",
          f"pred must be a scalar or have the shape of on_true (got {p}, {t})")
    check(types_compatible(t, f, ignore_quant=True) and types_compatible(t, r, ignore_quant=True), "C2",
          f"on_true, on_false and result must have the same type (got {t}, {f}, {r})")


@verifier("stablehlo.clamp")
def clamp(op, check):
    lo, x, hi = (v.type for v in op.operands)
    r = op.results[0].type
    check(not ranked(lo) or lo.rank == 0 or shapes_compatible(lo, x), "C1",
          f"min must be a scalar or have the operand's shape (got {lo}, {x})")
    check(not ranked(hi) or hi.rank == 0 or shapes_compatible(hi, x), "C2",
          f"max must be a scalar or have the operand's shape (got {hi}, {x})")
    check(elems_equal(lo, x, True) and elems_equal(hi, x, True), "C3",
          f"min, operand and max must have the same element type (got {lo}, {x}, {hi})")
    check(types_compatible(x, r, True), "C4", f"operand and result must have the same type (got {x}, {r})")


@verifier("stablehlo.bitcast_convert")
def bitcast_convert(op, check):
    a, r = op.operands[0].type, op.results[0].type
    ea, er = elem(a), elem(r)
    sa = ea.storage_type if isinstance(ea, QuantizedType) else ea
    sr = er.storage_type if isinstance(er, QuantizedType) else er
    if not (isinstance(sa, ElementType) and isinstance(sr, ElementType)):
        return
    check(sa.is_complex == sr.is_complex, "C2", f"complex may only be bitcast to complex (got {a}, {r})")
    if not (ranked(a) and ranked(r)):
        return
    wa, wr = sa.bits, sr.bits
    if wa == wr:
        check(shapes_compatible(a, r), "C1", f"operand and result must have the same shape (got {a}, {r})")
    elif wa > wr:
        check(r.rank == a.rank + 1 and shape_matches(TensorType(r.shape[:-1], er), a.shape)
              and dim_ok(r.shape[-1], wa // wr) and wa % wr == 0, "C1",
              f"narrowing bitcast must add a last dimension of size {wa // max(wr, 1)} (got {a}, {r})")
    else:
        check(a.rank == r.rank + 1 and shape_matches(TensorType(a.shape[:-1], ea), r.shape)
              and dim_ok(a.shape[-1], wr // wa) and wr % wa == 0, "C1",
              f"widening bitcast must drop a last dimension of size {wr // max(wa, 1)} (got {a}, {r})")


@verifier("stablehlo.reduce_precision")
def reduce_precision(op, check):
    same_type_traits(op, check, "C1")
    check(int_value(op.attributes.get("exponent_bits"), 1) >= 1, "C2", "exponent_bits must be at least 1")
    check(int_value(op.attributes.get("mantissa_bits"), 0) >= 0, "C3", "mantissa_bits must be non-negative")
