"""Comparing a backend's outputs with a case's expected outputs, one rule per output."""
from __future__ import annotations

from typing import List, Optional

import numpy as np

from .cases import Case, Rule


def _element_type(name: str):
    from stablehlo_ref.ir.types import ELEMENT_TYPES
    return ELEMENT_TYPES.get(name)


def _fmt(x) -> str:
    try:
        if isinstance(x, (np.floating,)) or (hasattr(x, "dtype") and x.dtype.kind in "fV"):
            return repr(float(x))
        return repr(x.item() if hasattr(x, "item") else x)
    except (TypeError, ValueError):
        return str(x)


def _rel_close(actual, expected, et, rule, atol_scale: float):
    """|actual - expected| <= atol + rtol * |expected| per element (complex: per part);
    NaN equals NaN; non-finite values only equal themselves."""
    if et.is_complex:
        parts = [(actual.real, expected.real), (actual.imag, expected.imag)]
    else:
        parts = [(actual, expected)]
    ok = True
    for a, e in parts:
        fa = np.asarray(a).astype(np.float64)
        fe = np.asarray(e).astype(np.float64)
        with np.errstate(all="ignore"):
            close = (fa == fe) | (np.isnan(fa) & np.isnan(fe)) | (
                np.isfinite(fa) & np.isfinite(fe) & (np.abs(fa - fe) <= rule.atol * atol_scale + rule.rtol * np.abs(fe)))
        ok = ok & close
    return ok


def compare_output(actual, expected, et_name: str, rule: Rule, extra_ulps: int = 0,
                   atol_scale: float = 1.0) -> Optional[dict]:
    """None when `actual` matches `expected` under `rule`; else a dict describing the first
    mismatching element: index, actual, expected, ulp (for floats), count, rule."""
    from stablehlo_ref.interpreter.numerics import approx_equal, ulp_difference
    et = _element_type(et_name)
    expected = np.asarray(expected)
    try:
        actual = np.asarray(actual)
    except Exception as e:       # noqa: BLE001 - whatever a backend handed back
        return {"message": f"output is not an array: {e}"}
    if actual.shape != expected.shape:
        return {"message": f"shape {tuple(actual.shape)} (actual) vs {tuple(expected.shape)} (expected)"}
    floaty = et is not None and (et.is_float or et.is_complex)
    if et is not None and actual.dtype != et.dtype:
        try:
            actual = actual.astype(et.dtype)
        except (TypeError, ValueError):
            return {"message": f"dtype {actual.dtype} (actual) vs {et.dtype} (expected)"}
    if et is not None and expected.dtype != et.dtype:
        expected = expected.astype(et.dtype)
    if actual.size == 0 or rule.kind == "shape":
        return None
    ulp = None
    if rule.kind == "range":
        if et is not None and et.is_complex:
            return {"message": "a `range` rule on a complex output"}
        a = actual.astype(np.float64) if floaty else actual.astype(object)
        ok = (a >= rule.lo) & (a < rule.hi)
        ok = np.asarray(ok, dtype=bool).reshape(actual.shape)
        if ok.all():
            return None
        bad = np.argwhere(~ok)
        idx = tuple(int(i) for i in bad[0]) if ok.ndim else ()
        return {"index": list(idx), "actual": _fmt(actual[idx]), "expected": f"[{rule.lo:g}, {rule.hi:g})",
                "count": int(ok.size - np.count_nonzero(ok)), "size": int(ok.size), "rule": rule.describe()}
    if not floaty or rule.kind == "exact":
        if floaty:
            ok = approx_equal(actual, expected, et, 0.0)
        elif actual.dtype.kind == "V":
            ok = (actual.view(np.uint8).reshape(actual.shape + (-1,)) ==
                  expected.view(np.uint8).reshape(expected.shape + (-1,))).all(axis=-1)
        else:
            ok = actual == expected
    elif rule.kind == "atol":
        ok = approx_equal(actual, expected, et, rule.atol * atol_scale)
    elif rule.kind == "close":
        ulp = ulp_difference(actual, expected, et)
        ok = (ulp <= np.uint64(rule.max_ulp + extra_ulps)) | _rel_close(actual, expected, et, rule, atol_scale)
    else:
        ulp = ulp_difference(actual, expected, et)
        ok = ulp <= np.uint64(rule.max_ulp + extra_ulps)
    ok = np.asarray(ok).reshape(actual.shape)      # ulp_difference gives 0-d inputs one dimension
    if ok.all():
        return None
    bad = np.argwhere(~ok)
    idx = tuple(int(i) for i in bad[0]) if ok.ndim else ()
    if floaty and ulp is None:
        ulp = ulp_difference(actual, expected, et)
    out = {"index": list(idx), "actual": _fmt(actual[idx]), "expected": _fmt(expected[idx]),
           "count": int(ok.size - np.count_nonzero(ok)), "size": int(ok.size), "rule": rule.describe()}
    if ulp is not None:
        out["ulp"] = int(np.asarray(ulp).reshape(ok.shape)[idx])
    if rule.kind in ("ulp", "close") and extra_ulps:
        import dataclasses
        out["rule"] = dataclasses.replace(rule, max_ulp=rule.max_ulp + extra_ulps).describe()
    return out


def compare_case(case: Case, outputs: List, extra_ulps: int = 0, atol_scale: float = 1.0) -> Optional[dict]:
    """None when all outputs match; else the first mismatch, with the output's position and label."""
    if len(outputs) != len(case.expected):
        return {"message": f"{len(outputs)} output(s), expected {len(case.expected)}"}
    for i, (a, e, et, r) in enumerate(zip(outputs, case.expected, case.element_types, case.rules)):
        m = compare_output(a, e, et, r, extra_ulps, atol_scale)
        if m is not None:
            m = {"output": i, "label": case.labels[i] if i < len(case.labels) else str(i),
                 "expected_from": case.expected_from[i] if i < len(case.expected_from) else "constant", **m}
            return m
    return None


def describe_mismatch(m: dict) -> str:
    if "index" not in m:
        head = f"output {m['label']}: " if "label" in m else ""
        return head + m.get("message", "mismatch")
    idx = "[" + ", ".join(str(i) for i in m["index"]) + "]"
    s = (f"output {m['label']}: {m['count']} of {m['size']} element(s) differ ({m['rule']}); first at "
         f"{idx}: {m['actual']} (actual) vs {m['expected']} (expected)")
    if "ulp" in m:
        s += f", {m['ulp']} ULP apart"
    if m.get("expected_from") == "reference":
        s += " [expected value from the reference interpreter]"
    return s


def error_stats(case: Case, outputs: List) -> dict:
    """How far the outputs are from the expected values, over all outputs: the largest
    |actual - expected| and, for floats, the largest ULP distance, counting element pairs
    that are finite on both sides; `max_rel` the largest |actual - expected| / |expected| of
    the float elements that differ (inf where expected is 0); `nonfinite` counts the elements
    where one side is NaN or infinite and the other is not the same value. Outputs of the wrong shape or count are
    left out (the mismatch says what is wrong with them)."""
    from stablehlo_ref.interpreter.numerics import ulp_difference
    max_abs = None
    max_ulp = None
    max_rel = 0.0
    nonfinite = 0
    for a, e, et_name in zip(outputs, case.expected, case.element_types):
        et = _element_type(et_name)
        try:
            a = np.asarray(a)
            e = np.asarray(e)
        except Exception:      # noqa: BLE001 - whatever a backend handed back
            continue
        if et is None or a.shape != e.shape or a.size == 0:
            continue
        try:
            a = a.astype(et.dtype)
            e = e.astype(et.dtype)
        except (TypeError, ValueError):
            continue
        floaty = et.is_float or et.is_complex
        if floaty:
            parts = [(a.real, e.real), (a.imag, e.imag)] if et.is_complex else [(a, e)]
            for pa, pe in parts:
                with np.errstate(invalid="ignore"):    # (NaNs of bf16/f8 warn in the cast)
                    fa = np.asarray(pa).astype(np.float64)
                    fe = np.asarray(pe).astype(np.float64)
                finite = np.isfinite(fa) & np.isfinite(fe)
                same = (fa == fe) | (np.isnan(fa) & np.isnan(fe))
                nonfinite += int(np.count_nonzero(~finite & ~same))
                if finite.any():
                    d = float(np.max(np.abs(fa[finite] - fe[finite])))
                    max_abs = d if max_abs is None else max(max_abs, d)
                    diff = finite & ~same
                    if diff.any():
                        with np.errstate(divide="ignore", invalid="ignore"):
                            rel = np.abs(fa[diff] - fe[diff]) / np.abs(fe[diff])
                        max_rel = max(max_rel, float(np.max(np.where(np.isnan(rel), np.inf, rel))))
            u = np.asarray(ulp_difference(a, e, et)).reshape(-1)
            u = u[u != np.uint64(np.iinfo(np.uint64).max)]
            if u.size:
                m = int(u.max())
                max_ulp = m if max_ulp is None else max(max_ulp, m)
        else:
            try:
                d = (a != e).astype(np.float64) if a.dtype.kind == "b" else np.abs(a.astype(np.float64) - e.astype(np.float64))
            except (TypeError, ValueError):
                continue
            m = float(d.max())
            max_abs = m if max_abs is None else max(max_abs, m)
    return {"max_abs": max_abs, "max_ulp": max_ulp, "max_rel": max_rel, "nonfinite": nonfinite}
