"""The indexing oracles of the generated suite (conformance/generated/indexing.py) checked
against each other and against hand-computed cases."""
import numpy as np

from stablehlo_ref.conformance.generated import generate_cases


def _case(op, et, variant):
    [c] = [c for c in generate_cases(full=True, op=op) if c.id.endswith(f"/{et}/{variant}")]
    return c


def test_gather_rows_agree_with_torch_index_select_and_numpy_take():
    for et in ("i8", "f32"):
        g = _case("gather", et, "rows_3x4_n3")          # start indices [2, 0, -1]
        t = _case("torch_index_select", et, "3x4_dim0_idx2")   # indices [2, 0]
        x = np.asarray(g.inputs[0])
        assert np.array_equal(np.asarray(g.inputs[1]).ravel(), [2, 0, -1])
        ge = np.asarray(g.expected[0])
        assert np.array_equal(ge, x[[2, 0, 0]], equal_nan=True)   # -1 clamps to 0 (spec)
        te = np.asarray(t.expected[0])          # same indexing rule, other op
        assert np.array_equal(te, np.asarray(t.inputs[0])[[2, 0]], equal_nan=True)


def test_dynamic_pad_hand_case():
    c = _case("dynamic_pad", "i64", "lo10_hi02_in01")
    x, pv = np.asarray(c.inputs[0]), np.asarray(c.inputs[1]).item()
    e = np.asarray(c.expected[0])
    assert e.shape == (3, 7)
    assert (e[0] == pv).all() and (e[:, 5:] == pv).all() and (e[1:, 1] == pv).all()
    assert np.array_equal(e[1:, 0:5:2], x)


def test_real_dynamic_slice_and_dynamic_reshape_hand_cases():
    c = _case("real_dynamic_slice", "f64", "s10_l35_t12")
    assert np.array_equal(np.asarray(c.expected[0]), np.asarray(c.inputs[0])[1:3, 0:5:2], equal_nan=True)
    r = _case("dynamic_reshape", "i8", "2x3_to_3x2")
    assert np.array_equal(np.asarray(r.expected[0]).ravel(), np.asarray(r.inputs[0]).ravel())


def test_dynamic_iota_and_dynamic_broadcast_hand_cases():
    c = _case("dynamic_iota", "i64", "2x3_dim1")
    assert np.asarray(c.expected[0]).tolist() == [[0, 1, 2], [0, 1, 2]]
    b = _case("dynamic_broadcast_in_dim", "i8", "1x3_to_2x4x3")
    x = np.asarray(b.inputs[0])
    assert np.array_equal(np.asarray(b.expected[0]), np.broadcast_to(x.reshape(1, 1, 3), (2, 4, 3)))
