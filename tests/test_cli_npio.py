"""npio reads .npy/.npz bytes from strangers: any mutation of a valid file is read or refused
with a UsageError, never another exception, and never allocates more than its header declares."""
import io

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

from stablehlo_ref.errors import UsageError
from stablehlo_ref.npio import open_arrays


def _seeds():
    out = []
    b = io.BytesIO()
    np.save(b, np.arange(6, dtype=np.float32).reshape(2, 3))
    out.append(b.getvalue())
    b = io.BytesIO()
    np.savez(b, x=np.arange(3, dtype=np.int16), y=np.ones((2, 2), np.complex64))
    out.append(b.getvalue())
    b = io.BytesIO()
    np.savez_compressed(b, a=np.zeros(50, np.float64))
    out.append(b.getvalue())
    return out


SEEDS = _seeds()


def _read(data):
    try:
        for e in open_arrays(data, "f"):
            if e.nbytes <= 1 << 20:
                a = e.load()
                assert a.shape == e.shape and a.dtype == e.dtype
    except UsageError:
        pass


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(range(len(SEEDS))), st.lists(st.tuples(st.integers(0, 10 ** 6), st.integers(0, 255)),
                                                   max_size=6), st.integers(0, 10 ** 6))
def test_mutated_array_files(seed, flips, cut):
    data = bytearray(SEEDS[seed])
    for pos, val in flips:
        data[pos % len(data)] = val
    _read(bytes(data[:max(1, cut % (len(data) + 1))]))


def test_seeds_read_back():
    (e,) = open_arrays(SEEDS[0], "f")
    np.testing.assert_array_equal(e.load(), np.arange(6, dtype=np.float32).reshape(2, 3))
    got = {e.key: e.load() for e in open_arrays(SEEDS[1], "f")}
    assert set(got) == {"x", "y"} and got["y"].dtype == np.complex64
