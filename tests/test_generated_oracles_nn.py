"""The oracles of the generated suite's batch_norm, case and top_k cases
(conformance/generated/nn.py, misc.py) against numpy written out here and hand-computed cases."""
from __future__ import annotations

import numpy as np

from stablehlo_ref.conformance.generated import misc, nn


def test_batch_norm_inference_against_numpy_f64():
    for c in nn.batch_norm_inference_cases(True, None):
        if c.element_type != "f64":
            continue
        x, scale, offset, mean, var = (a.astype(np.float64) for a in c.inputs)
        fi = int(c.variant.rsplit("_f", 1)[1])
        shp = [1] * x.ndim
        shp[fi] = -1
        r = lambda v: v.reshape(shp)
        want = r(scale) * (x - r(mean)) / np.sqrt(r(var) + np.float64(np.float32(0.001))) + r(offset)
        assert np.all(np.abs(want - c.expected[0]) <= 1e-13 * (1 + np.abs(want))), c.id


def test_batch_norm_training_against_numpy_f64():
    for c in nn.batch_norm_training_cases(True, None):
        if c.element_type != "f64":
            continue
        x, scale, offset = (a.astype(np.float64) for a in c.inputs)
        fi = int(c.variant.rsplit("_f", 1)[1])
        axes = tuple(d for d in range(x.ndim) if d != fi)
        mean, var = x.mean(axis=axes), x.var(axis=axes)         # biased variance, as the spec
        shp = [1] * x.ndim
        shp[fi] = -1
        out = scale.reshape(shp) * (x - mean.reshape(shp)) / np.sqrt(var.reshape(shp) + np.float64(np.float32(0.001))) \
            + offset.reshape(shp)
        for got, want in zip(c.expected, (out, mean, var)):
            assert np.all(np.abs(want - got) <= 1e-13 * (1 + np.abs(want))), c.id


def _spec_batch_norm_grad_in_type(x, scale, mean, var, g, fi, dt, rng, eps):
    """The spec's batch_norm_grad composition op by op, every op rounding to `dt`, each
    reduction over the feature's elements in a random order."""
    R = lambda v: np.asarray(v).astype(dt)
    shp = [1] * x.ndim
    shp[fi] = -1
    b = lambda v: R(v).reshape(shp)
    axes = tuple(d for d in range(x.ndim) if d != fi)

    def rsum(a):
        moved = np.moveaxis(np.asarray(a), fi, 0).reshape(a.shape[fi], -1)
        out = []
        for row in moved:
            acc = None
            for v in rng.permutation(row):
                acc = v if acc is None else R(np.float64(acc) + np.float64(v))
            out.append(acc)
        return R(out)
    n = x.size // x.shape[fi]
    c = R(x.astype(np.float64) - b(mean).astype(np.float64))
    d = R(b(var).astype(np.float64) + np.float64(R(eps)))
    sd = R(np.sqrt(d.astype(np.float64)))
    normalized = R(c.astype(np.float64) / sd.astype(np.float64))
    f64 = lambda a: np.asarray(a).astype(np.float64)
    i1 = R(f64(g) * n)
    i2 = b(rsum(g))
    i3 = b(rsum(R(f64(g) * f64(c))))
    i5 = R(f64(R(f64(i3) * f64(c))) / f64(d))
    i6 = R(f64(R(f64(i1) - f64(i2))) - f64(i5))
    k = R(f64(R(f64(b(scale)) / f64(sd))) / n)
    go = R(f64(k) * f64(i6))
    gs = rsum(R(f64(g) * f64(normalized)))
    gb = rsum(g)
    del axes
    return go, gs, gb


def test_batch_norm_grad_narrow_types_oracle_is_the_spec_composition_in_the_type():
    """bf16/f16 batch_norm_grad: the spec's composition run op by op in the type (ml_dtypes
    roundings, reduction orders shuffled) gives exactly the expected values; an
    implementation that keeps variance + epsilon unrounded and computes in f64 (as the
    reference does) stays within the cases' tolerance."""
    from stablehlo_ref.conformance.compare import compare_case
    cases = nn.batch_norm_grad_narrow_cases(True, None)
    assert {c.element_type for c in cases} == {"bf16", "f16"} and len(cases) == 6
    rng = np.random.default_rng(7)
    for c in cases:
        x, scale, mean, var, g = c.inputs
        fi = int(c.variant.split("_f", 1)[1].split("_", 1)[0])
        for _ in range(5):
            got = _spec_batch_norm_grad_in_type(x, scale, mean, var, g, fi, x.dtype, rng, np.float32(0.001))
            for a, e in zip(got, c.expected):
                assert np.array_equal(a.astype(np.float64), e.astype(np.float64)), c.id   # +0 == -0
        # variance + epsilon unrounded, in f64, rounded once at the end
        xf, gf = x.astype(np.float64), g.astype(np.float64)
        shp = [1] * x.ndim
        shp[fi] = -1
        r = lambda v: v.astype(np.float64).reshape(shp)
        axes = tuple(d for d in range(x.ndim) if d != fi)
        sd = np.sqrt(r(var) + np.float64(np.float32(0.001)))
        norm = (xf - r(mean)) / sd
        gb, gs = gf.sum(axis=axes), (gf * norm).sum(axis=axes)
        n = x.size // x.shape[fi]
        go = r(scale) / sd * (gf - gb.reshape(shp) / n - norm * gs.reshape(shp) / n)
        outs = [go.astype(x.dtype), gs.astype(x.dtype), gb.astype(x.dtype)]
        assert compare_case(c, outs) is None, c.id


def test_case_picks_the_branch_by_hand():
    cases = {c.variant: c for c in misc.case_cases(True, None) if c.element_type == "i8"}
    assert cases["index1"].expected[0].tolist() == cases["index1"].inputs[2].tolist()
    assert cases["index0"].expected[0].tolist() == cases["index0"].inputs[1].tolist()
    for v in ("index5", "index_minus1"):           # out of range: the last branch
        assert cases[v].expected[0].tolist() == cases[v].inputs[3].tolist()


def test_top_k_against_numpy_argsort():
    for c in misc.top_k_cases(True, None):
        # numpy orders complex values lexicographically (real, then imaginary), as top_k does
        dt = np.complex128 if np.iscomplexobj(c.inputs[0]) else np.float64
        x = c.inputs[0].astype(dt)
        k = c.expected[0].shape[-1]
        idx = np.argsort(-x, axis=-1, kind="stable")[..., :k]
        assert c.expected[1].tolist() == idx.tolist(), c.id
        np.testing.assert_array_equal(c.expected[0].astype(dt), np.take_along_axis(x, idx, -1))
    c = [c for c in misc.top_k_cases(False, None) if c.element_type == "i8"][0]
    row = c.inputs[0][0].tolist()
    assert c.expected[0][0].tolist() == sorted(row, reverse=True)[:3]


def test_quantize_round_trip_by_hand():
    from stablehlo_ref.conformance.generated.quantized import round_trip_oracle
    # scale 0.5, zero point -3: x / scale + zp is rounded to the nearest even integer after the
    # zero point is added (the spec's quantize), so 2.5 - 3 = -0.5 -> 0 -> (0 + 3) * 0.5 = 1.5
    got = round_trip_oracle([1.25, 1.75, 0.75, 60.0, -100.0], 0.5, -3, (-128, 127))
    assert got == [1.5, 1.5, 0.5, 60.0, -62.5]        # -100 clamps to -128
    # q - zero point past the storage type (127 - (-3)): left out
    assert round_trip_oracle([64.5], 0.5, -3, (-128, 127)) == [None]      # q = 126, 126 + 3 > 127
    # a scale that f32 cannot hold: x / f32(0.1), then one rounding of the product
    import numpy as np
    s = float(np.float32(0.1))
    assert round_trip_oracle([0.3], 0.1, 0, (-127, 127)) == [float(np.float32(3 * np.float64(s)))]


def test_chlo_broadcast_cases_against_numpy_broadcasting():
    for c in misc.chlo_broadcast_cases(True, None):
        a = [x.astype(np.float64) if x.dtype.kind not in "biuc" else x for x in c.inputs]
        if c.op == "chlo.broadcast_select":
            want = np.where(c.inputs[0], a[1], a[2])
            np.testing.assert_array_equal(c.expected[0].astype(np.float64) if c.expected[0].dtype.kind not in "biuc"
                                          else c.expected[0], want)
        elif c.op == "chlo.broadcast_complex":
            np.testing.assert_array_equal(c.expected[0], a[0] + 1j * a[1])
        else:
            d = c.variant.split("_")[0]
            want = {"LT": np.less, "EQ": np.equal, "NE": np.not_equal}[d](a[0], a[1])
            np.testing.assert_array_equal(c.expected[0], want)


def _bn_training_in_type(x, scale, offset, fi, dt, rng, eps):
    """The spec's batch_norm_training composition op by op, every op rounding to `dt` (reductions
    in a random order): mean = sum / N, var = sum(centered^2) / N, then inference's steps."""
    R = lambda v: np.asarray(v).astype(dt)
    f64 = lambda a: np.asarray(a).astype(np.float64)
    shp = [1] * x.ndim
    shp[fi] = -1

    def rsum(a):
        moved = np.moveaxis(np.asarray(a), fi, 0).reshape(a.shape[fi], -1)
        out = []
        for row in moved:
            acc = R(0.0)
            for v in rng.permutation(row):
                acc = R(f64(acc) + f64(v))
            out.append(acc)
        return R(out)
    n = x.size // x.shape[fi]
    mean = R(f64(rsum(x)) / n)
    c = R(f64(x) - f64(mean).reshape(shp))
    var = R(f64(rsum(R(f64(c) * f64(c)))) / n)
    return _bn_inference_in_type(x, scale, offset, mean, var, fi, dt, eps), mean, var


def _bn_inference_in_type(x, scale, offset, mean, var, fi, dt, eps):
    R = lambda v: np.asarray(v).astype(dt)
    f64 = lambda a: np.asarray(a).astype(np.float64)
    shp = [1] * x.ndim
    shp[fi] = -1
    b = lambda v: f64(v).reshape(shp)
    c = R(f64(x) - b(mean))
    sd = R(np.sqrt(f64(R(b(var) + f64(R(eps))))))
    nrm = R(f64(c) / f64(sd))
    return R(f64(R(b(scale) * f64(nrm))) + b(offset))


def _fi(c):
    return int(c.variant.split("_f", 1)[1].split("_", 1)[0])


def test_batch_norm_low_precision_oracles_are_the_spec_composition_in_the_type():
    """4/6/8-bit float batch_norm cases (`*_exact_steps`): the spec's compositions run op by op
    in the type (ml_dtypes roundings, reduction orders shuffled) give exactly the expected
    values; every such type has cases of all three ops but f8E8M0FNU, which has inference only;
    the reference (f64, epsilon unrounded, one rounding) is within the cases' tolerance."""
    from stablehlo_ref.conformance.compare import compare_case
    import stablehlo_ref as shlo
    low = {"f4E2M1FN", "f6E2M3FN", "f6E3M2FN", "f8E3M4", "f8E4M3", "f8E4M3FN", "f8E4M3FNUZ",
           "f8E4M3B11FNUZ", "f8E5M2", "f8E5M2FNUZ", "f8E8M0FNU"}
    inf = nn.batch_norm_inference_narrow_cases(True, None)
    tr = nn.batch_norm_training_narrow_cases(True, None)
    gr = nn.batch_norm_grad_low_precision_cases(True, None)
    assert {c.element_type for c in inf} == low
    assert {c.element_type for c in tr} == {c.element_type for c in gr} == low - {"f8E8M0FNU"}
    rng = np.random.default_rng(11)
    eps = np.float32(0.001)
    for c in inf:
        x, scale, offset, mean, var = c.inputs
        got = _bn_inference_in_type(x, scale, offset, mean, var, _fi(c), x.dtype, eps)
        assert np.array_equal(got.astype(np.float64), c.expected[0].astype(np.float64)), c.id
    for c in tr:
        x, scale, offset = c.inputs
        for _ in range(3):
            got = _bn_training_in_type(x, scale, offset, _fi(c), x.dtype, rng, eps)
            for a, e in zip(got, c.expected):
                assert np.array_equal(a.astype(np.float64), e.astype(np.float64)), c.id
    for c in gr:
        x, scale, mean, var, g = c.inputs
        for _ in range(3):
            got = _spec_batch_norm_grad_in_type(x, scale, mean, var, g, _fi(c), x.dtype, rng, eps)
            for a, e in zip(got, c.expected):
                assert np.array_equal(a.astype(np.float64), e.astype(np.float64)), c.id
    for c in inf + tr + gr:
        outs = shlo.run(shlo.parse(c.program), *c.inputs)
        outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
        assert compare_case(c, outs) is None, c.id


def test_batch_norm_training_and_grad_refuse_f8E8M0FNU():
    """No semantics in f8E8M0FNU (no zero, no sign): one clear interpreter error, no numbers."""
    import pytest
    import stablehlo_ref as shlo
    from stablehlo_ref.errors import InterpreterError
    t, f = "tensor<2x2xf8E8M0FNU>", "tensor<2xf8E8M0FNU>"
    progs = [
        f"""func.func @main(%x: {t}, %s: {f}, %o: {f}) -> ({t}, {f}, {f}) {{
  %0:3 = "stablehlo.batch_norm_training"(%x, %s, %o) {{epsilon = 0.001 : f32, feature_index = 1 : i64}} : ({t}, {f}, {f}) -> ({t}, {f}, {f})
  return %0#0, %0#1, %0#2 : {t}, {f}, {f}
}}""",
        f"""func.func @main(%x: {t}, %s: {f}, %m: {f}, %v: {f}, %g: {t}) -> ({t}, {f}, {f}) {{
  %0:3 = "stablehlo.batch_norm_grad"(%x, %s, %m, %v, %g) {{epsilon = 0.001 : f32, feature_index = 1 : i64}} : ({t}, {f}, {f}, {f}, {t}) -> ({t}, {f}, {f})
  return %0#0, %0#1, %0#2 : {t}, {f}, {f}
}}"""]
    import ml_dtypes
    dt = ml_dtypes.float8_e8m0fnu
    x, v = np.array([[1, 2], [4, 8]], dtype=np.float32).astype(dt), np.array([1, 2], np.float32).astype(dt)
    args = [(x, v, v), (x, v, v, v, x)]
    for prog, a in zip(progs, args):
        with pytest.raises(InterpreterError, match="no semantics for f8E8M0FNU"):
            shlo.run(shlo.parse(prog), *a)
