"""The `check` test dialect and the `@check.*` custom-call targets, with upstream's comparison
semantics: exact for integers; for floats/complex `expect_eq` and `expect_almost_eq` compare
within an absolute tolerance (NaN equals NaN, complex parts separately) and `expect_close`
within a range of ULPs."""
from __future__ import annotations

import numpy as np

from ..errors import CheckFailure, InterpreterError
from ..ir.attributes import DenseElementsAttr
from ..ir.defaults import default_of
from .numerics import approx_equal, elem, ulp_difference
from .registry import kernel

# The check dialect's defaults are its ops' spec defaults (spec/ops/check/); the rest are
# upstream's fixed tolerances, held by no attribute: `expect_eq` on floats (both forms) and the
# `check.expect_*` custom calls of the testdata corpus.
ALMOST_EQ_TOLERANCE = default_of("check.expect_almost_eq", "tolerance")
DIALECT_CLOSE_ULPS = (default_of("check.expect_close", "min_ulp_difference"),
                      default_of("check.expect_close", "max_ulp_difference"))
EQ_TOLERANCE = 1e-4
CUSTOM_CALL_ALMOST_EQ_TOLERANCE = 1e-3
CUSTOM_CALL_CLOSE_ULPS = (0, 3)


def _fmt_index(idx):
    return "[" + ", ".join(str(int(i)) for i in idx) + "]"


def _first_bad(mask):
    bad = np.argwhere(~mask)
    return tuple(bad[0]) if len(bad) else None


def _same_shape(a, b, what):
    if a.__class__ is not np.ndarray:
        a = np.asarray(a)
    if b.__class__ is not np.ndarray:
        b = np.asarray(b)
    if a.shape != b.shape:
        raise CheckFailure(f"{what}: shapes differ: {a.shape} (actual) vs {b.shape} (expected)")
    return a, b


def _bits_identical(a, b) -> bool:
    """Whether two arrays of one dtype and shape hold the same bytes: then every check holds
    (equal values or NaNs alike, a ULP distance of 0; equal integers and booleans), so the
    element-wise comparison, which costs tens of microseconds on bf16/f8 arrays, can be
    skipped."""
    return a.dtype == b.dtype and a.tobytes() == b.tobytes()


def expect_eq(actual, expected, et, what="check.expect_eq"):
    actual, expected = _same_shape(actual, expected, what)
    # (identical bytes pass whatever the type: equal integers and booleans too)
    if actual.dtype == expected.dtype and actual.tobytes() == expected.tobytes():
        return
    if et.is_float or et.is_complex:
        ok = approx_equal(actual, expected, et, EQ_TOLERANCE)
    else:
        ok = actual == expected
    if not np.all(ok):
        i = _first_bad(np.asarray(ok))
        n = int(np.size(ok) - np.count_nonzero(ok))
        raise CheckFailure(f"{what}: {n} element(s) differ; first at index {_fmt_index(i)}: "
                           f"{actual[i]} (actual) vs {expected[i]} (expected)")


def expect_almost_eq(actual, expected, et, tol, what="check.expect_almost_eq"):
    actual, expected = _same_shape(actual, expected, what)
    if not (et.is_float or et.is_complex):
        return expect_eq(actual, expected, et, what)
    if _bits_identical(actual, expected):
        return
    ok = approx_equal(actual, expected, et, tol)
    if not np.all(ok):
        i = _first_bad(np.asarray(ok))
        n = int(np.size(ok) - np.count_nonzero(ok))
        raise CheckFailure(f"{what}: {n} element(s) differ by more than {tol}; first at index "
                           f"{_fmt_index(i)}: {actual[i]} (actual) vs {expected[i]} (expected)")


def expect_close(actual, expected, et, min_ulp, max_ulp, what="check.expect_close"):
    actual, expected = _same_shape(actual, expected, what)
    kind = et.kind
    if kind != "float" and kind != "complex":
        raise InterpreterError(f"{what}: unsupported element type {et}")
    if min_ulp <= 0 and actual.dtype == expected.dtype and actual.tobytes() == expected.tobytes():
        return          # (`_bits_identical`, in line)
    d = ulp_difference(actual, expected, et)
    ok = (d <= np.uint64(max_ulp)) & (d >= np.uint64(min_ulp))
    if not np.all(ok):
        i = _first_bad(ok)
        n = int(ok.size - np.count_nonzero(ok))
        raise CheckFailure(f"{what}: {n} element(s) outside [{min_ulp}, {max_ulp}] ULP; first at index "
                           f"{_fmt_index(i)}: {actual[i]} (actual) vs {expected[i]} (expected), "
                           f"ULP difference {int(d[i])}")


def _const(op):
    v = op.attributes["value"]
    if not isinstance(v, DenseElementsAttr):
        raise InterpreterError(f"{op.name}: expected a dense constant")
    return v.array


def _tol(op, default):
    t = op.attributes.get("tolerance")
    return float(t.value) if t is not None else default


@kernel("check.expect_eq")
def k_expect_eq(ctx, op, lhs, rhs):
    expect_eq(lhs, rhs, elem(op.operands[0].type))
    return []


@kernel("check.expect_eq_const")
def k_expect_eq_const(ctx, op, lhs):
    expect_eq(lhs, _const(op), elem(op.operands[0].type), "check.expect_eq_const")
    return []


@kernel("check.expect_almost_eq")
def k_expect_almost_eq(ctx, op, lhs, rhs):
    expect_almost_eq(lhs, rhs, elem(op.operands[0].type), _tol(op, ALMOST_EQ_TOLERANCE))
    return []


@kernel("check.expect_almost_eq_const")
def k_expect_almost_eq_const(ctx, op, lhs):
    expect_almost_eq(lhs, _const(op), elem(op.operands[0].type), _tol(op, ALMOST_EQ_TOLERANCE),
                     "check.expect_almost_eq_const")
    return []


@kernel("check.expect_close")
def k_expect_close(ctx, op, actual, expected):
    mx = op.attributes.get("max_ulp_difference")
    mn = op.attributes.get("min_ulp_difference")
    expect_close(actual, expected, elem(op.operands[0].type),
                 mn.value if mn is not None else DIALECT_CLOSE_ULPS[0],
                 mx.value if mx is not None else DIALECT_CLOSE_ULPS[1])
    return []


def _cc_eq(ctx, op, lhs, rhs, *rest):
    expect_eq(lhs, rhs, elem(op.operands[0].type), "check.expect_eq")


def _cc_almost_eq(ctx, op, lhs, rhs, *rest):
    expect_almost_eq(lhs, rhs, elem(op.operands[0].type), CUSTOM_CALL_ALMOST_EQ_TOLERANCE, "check.expect_almost_eq")


def _cc_close(ctx, op, lhs, rhs, *rest):
    expect_close(lhs, rhs, elem(op.operands[0].type), CUSTOM_CALL_CLOSE_ULPS[0],
                 CUSTOM_CALL_CLOSE_ULPS[1], "check.expect_close")


def _cc_check_eq(ctx, op, actual, expected, *rest):
    """`@check.eq(actual, expected)` of the testdata generator: exact when `expected` holds
    integers, else within 1e-4; its `tensor<i1>` result is true when the check holds."""
    et = elem(op.operands[1].type)
    if et.is_float or et.is_complex:
        expect_almost_eq(actual, expected, et, ALMOST_EQ_TOLERANCE, "check.eq")
    else:
        expect_eq(actual, expected, et, "check.eq")
    return [np.ones(tuple(r.type.shape), dtype=np.bool_) for r in op.results]


CUSTOM_CALL_CHECKS = {
    "check.eq": _cc_check_eq,
    "check.expect_eq": _cc_eq,
    "check.expect_almost_eq": _cc_almost_eq,
    "check.expect_close": _cc_close,
}
