"""The saved table of lgamma/digamma roots (chlo.ROOTS_TABLE) is what compute_roots gives,
float for float, and the kernels fall back to computing it when the file is absent."""
import numpy as np
import pytest

from stablehlo_ref.interpreter import chlo


def _same(a, b):
    if isinstance(a, tuple):
        a, b = [a], [b]
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert x[:3] == y[:3]
        assert x[3].dtype == y[3].dtype == np.float64
        assert np.array_equal(x[3], y[3])      # infinities compare equal; there are no NaNs


@pytest.mark.slow
def test_the_saved_table_is_what_compute_roots_gives():
    table = chlo._read_roots_table()
    assert table is not None
    for kind in chlo._ROOT_KINDS:
        _same(table[kind], chlo.compute_roots(kind))


def test_the_table_text_round_trips():
    table = chlo._read_roots_table()
    assert set(table) == set(chlo._ROOT_KINDS)
    assert len(table["digamma"]) == 30 and len(table["lgamma"]) == 24
    assert table["digamma_pos"][3].shape == (120,)
    assert all(e[3].shape == (64,) for k in ("digamma", "lgamma") for e in table[k])


def test_a_missing_or_broken_table_reads_as_none(tmp_path, monkeypatch):
    monkeypatch.setattr(chlo, "ROOTS_TABLE", "no-such-table.json")
    assert chlo._read_roots_table() is None
    bad = tmp_path / "t.json"
    bad.write_text('{"digamma_pos": [1.0]}')
    monkeypatch.setattr(chlo, "__file__", str(tmp_path / "chlo.py"))
    monkeypatch.setattr(chlo, "ROOTS_TABLE", "t.json")
    assert chlo._read_roots_table() is None


def test_the_kernels_use_the_table_near_a_root(monkeypatch):
    # lgamma's zero in (-3, -2): relative accuracy holds there only through the roots' series
    monkeypatch.setattr(chlo, "_ROOTS", {})

    def no(kind):
        raise AssertionError("computed, not read")
    monkeypatch.setattr(chlo, "compute_roots", no)
    hi = chlo._roots("lgamma")[0][0]
    x = np.array([hi, np.nextafter(hi, 0), np.nextafter(hi, -np.inf)])
    out = chlo.lgamma(x)
    assert np.all(np.abs(out) < 1e-14) and np.all(out != 0)


def test_the_table_is_read_once_for_every_kind(monkeypatch):
    monkeypatch.setattr(chlo, "_ROOTS", {})
    calls = []
    read = chlo._read_roots_table
    monkeypatch.setattr(chlo, "_read_roots_table", lambda: calls.append(1) or read())
    got = [chlo._roots(k) for k in ("lgamma", "digamma", "digamma_pos", "lgamma")]
    assert calls == [1]
    table = read()
    for g, k in zip(got, ("lgamma", "digamma", "digamma_pos")):
        entries = [g] if k == "digamma_pos" else g
        want = [table[k]] if k == "digamma_pos" else table[k]
        assert all(a[:3] == b[:3] and np.array_equal(a[3], b[3]) for a, b in zip(entries, want))
