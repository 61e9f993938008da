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
        x = c.inputs[0].astype(np.float64)
        k = c.expected[0].shape[-1]
        idx = np.argsort(-x, axis=-1, kind="stable")[..., :k]
        assert c.expected[1].tolist() == idx.tolist(), c.id
        np.testing.assert_array_equal(c.expected[0].astype(np.float64), np.take_along_axis(x, idx, -1))
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
