"""Random command lines over every command but `conformance` (its own tests drive it): each
ends with exit code 0, 1 or 2 and never an internal error or an exception."""
import io
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from stablehlo_ref.cli import build_parser, main

PROGRAM = """func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.add %x, %x : tensor<2xf32>
  return %0 : tensor<2xf32>
}
"""


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("fuzz")
    (d / "p.mlir").write_text(PROGRAM)
    (d / "bad.mlir").write_text(PROGRAM.replace("tensor<2xf32>\n  return", "tensor<3xf32>\n  return"))
    (d / "empty").write_bytes(b"")
    np.save(d / "x.npy", np.array([1, 2], np.float32))
    np.save(d / "x64.npy", np.array([1, 2], np.float64))
    np.savez(d / "x.npz", x=np.array([1, 2], np.float32))
    (d / "sub").mkdir()
    return d


def _commands():
    p = build_parser()
    sub = next(a for a in p._actions if a.__class__.__name__ == "_SubParsersAction")
    return {n: sp for n, sp in sub.choices.items() if n not in ("conformance", "conform")}


COMMANDS = _commands()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_random_command_lines(files, tmp_path_factory, data, capsysbinary, monkeypatch):
    d = files
    out = tmp_path_factory.mktemp("o")
    monkeypatch.chdir(out)          # relative names drawn below ("0", "main") land here
    values = st.sampled_from([str(d / "p.mlir"), str(d / "bad.mlir"), str(d / "empty"), str(d / "x.npy"),
                              str(d / "x64.npy"), str(d / "x.npz"), str(d / "sub"), str(d / "missing"),
                              "-", "0", "1", "-1", "main", "nosuch", "1.0.0", "current", "text", "bytecode",
                              str(out / "o.npy"), str(out / "o.npz"), str(out / "no" / "o"), "add", "erf"])
    name = data.draw(st.sampled_from(sorted(COMMANDS)))
    sp = COMMANDS[name]
    argv = [name]
    for a in sp._actions:
        if a.__class__.__name__ == "_HelpAction":
            continue
        if not a.option_strings:
            n = 1 if a.nargs in (None, "?") else data.draw(st.integers(1, 2))
            argv += [data.draw(values) for _ in range(n)]
        elif data.draw(st.integers(0, 3)) == 0:
            argv.append(a.option_strings[-1])
            if a.nargs != 0:
                argv.append(data.draw(st.sampled_from(list(a.choices))) if a.choices else data.draw(values))

    class _In:
        buffer = io.BytesIO(data.draw(st.sampled_from([b"", PROGRAM.encode(), b"\xff\x00"])))
    monkeypatch.setattr(sys, "stdin", _In())
    rc = main(argv)
    o, e = capsysbinary.readouterr()       # stdout may carry bytecode
    e = e.decode("utf-8", "replace")
    assert rc in (0, 1, 2), (argv, e)
    assert "Traceback" not in e and "internal error" not in e, (argv, e)
    if rc != 0 and "--json" not in argv:      # validate --json reports on stdout only
        assert "error: " in e.splitlines()[0], (argv, e)
    assert not [p for p in out.rglob(".tmp-*")]
    monkeypatch.undo()
