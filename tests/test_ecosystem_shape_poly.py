"""Symbolic dimensions of jax.export shape-polymorphic programs (stablehlo_ref/shape_poly.py):
jax's dimension expressions, the shape specifications jax writes into programs and payloads,
and `conform --program --random-inputs S --dim b=5` sizing arguments whose dimensions are
derived from the variables (`2*b`, `b + 1`, `a*c`), not only plain ones."""
import importlib.util

import numpy as np
import pytest

from stablehlo_ref.errors import UsageError
from stablehlo_ref.shape_poly import argument_sizes, expand_dims, parse_dim_expr, shape_specs


@pytest.mark.parametrize("text,env,want", [
    ("b", {"b": 5}, 5), ("2*b", {"b": 5}, 10), ("b + 1", {"b": 5}, 6), ("2*b + 1", {"b": 3}, 7),
    ("a*c", {"a": 3, "c": 4}, 12), ("b - 1", {"b": 5}, 4), ("-1*b + 8", {"b": 3}, 5),
    ("floordiv(b, 2)", {"b": 7}, 3), ("mod(b, 3)", {"b": 7}, 1), ("max(a, c)", {"a": 2, "c": 9}, 9),
    ("min(a, c) + 1", {"a": 2, "c": 9}, 3), ("non_negative(b - 10)", {"b": 4}, 0),
    ("3*(a + 2)*c", {"a": 1, "c": 2}, 18), ("12", {}, 12),
])
def test_dimension_expressions(text, env, want):
    e = parse_dim_expr(text)
    assert e.variables() == set(env)
    assert e.evaluate(env) == want


@pytest.mark.parametrize("text", ["", "2*", "b +", "(b", "b)", "foo(b)", "max(b)", "b $ 2", "2 b"])
def test_malformed_dimension_expressions(text):
    with pytest.raises(UsageError):
        parse_dim_expr(text)


@pytest.mark.parametrize("text,size,want", [("2*b", 10, 5), ("b + 1", 6, 5), ("3*b - 2", 13, 5),
                                            ("floordiv(b, 2)", 3, 6), ("max(b, 4)", 7, 7), ("b*b", 9, 3)])
def test_solving_an_expression_for_its_variable(text, size, want):
    from stablehlo_ref.shape_poly import solve
    assert solve(parse_dim_expr(text), size, text) == want


def test_specs_from_payload_shapes_and_sizes():
    specs = shape_specs(None, [["2*b", "3"], ["b + 1"], ["4"]])
    assert argument_sizes(specs, {"b": 5}) == {(0, 0): 10, (1, 0): 6}
    assert argument_sizes(specs, {}) == {}
    with pytest.raises(UsageError, match="b - 7 = -2"):
        argument_sizes({0: ["b - 7"]}, {"b": 5})


_needs_jax = pytest.mark.skipif(importlib.util.find_spec("jax") is None,
                                reason="jax is not installed (pip install -e .[interop])")


def _export(fn, *shapes):
    import jax
    import jax.numpy as jnp
    from jax import export
    return export.export(jax.jit(fn))(*[jax.ShapeDtypeStruct(s, jnp.float32) for s in shapes])


def _programs():
    import jax.numpy as jnp
    from jax import export
    b, = export.symbolic_shape("b")
    a, c = export.symbolic_shape("a, c")
    return {
        # b only through 2*b (jax divides to get b) and b + 1
        "derived": (lambda x, y: (jnp.sum(x.reshape(b, 6), axis=1) + y[1:], jnp.concatenate([y, y])),
                    [(2 * b, 3), (b + 1,)], ["b=5"]),
        # two variables and their product
        "product": (lambda x, y: (x.reshape(-1) * y, jnp.pad(x, ((1, 1), (0, 2)))),
                    [(a, c), (a * c,)], ["a=3", "c=4"]),
        # no argument dimension is the plain variable
        "affine": (lambda x: jnp.cumsum(x, axis=0), [(2 * b + 1, 4)], ["b=5"]),
    }


@_needs_jax
@pytest.mark.parametrize("name", ["derived", "product", "affine"])
@pytest.mark.parametrize("form", ["text", "payload"])
@pytest.mark.parametrize("backend", ["reference", "xla"])
def test_conform_random_inputs_with_derived_dimensions(name, form, backend, tmp_path, capsys):
    from stablehlo_ref.cli import main
    fn, shapes, dims = _programs()[name]
    exp = _export(fn, *shapes)
    p = tmp_path / ("p.mlir" if form == "text" else "p.bin")
    if form == "text":
        p.write_text(exp.mlir_module())
    else:
        p.write_bytes(exp.serialize())
    # XLA gets the program specialised to the arguments' shapes (a static @main calling the
    # polymorphic one, then shape refinement), as jax does before it compiles
    argv = ["conform", "--program", str(p), "--backend", backend, "--random-inputs", "0"]
    for d in dims:
        argv += ["--dim", d]
    assert main(argv) == 0, capsys.readouterr()
    assert "PASS" in capsys.readouterr().out


@_needs_jax
def test_expanded_sizes_run_and_match_jax():
    """The sizes `--dim b=5` gives a `2*b` / `b + 1` program are those jax's own call accepts,
    and our interpreter's results on them equal jax's."""
    import stablehlo_ref as shlo
    from stablehlo_ref.shape_poly import expand_dims
    fn, shapes, _ = _programs()["derived"]
    exp = _export(fn, *shapes)
    m = shlo.parse(exp.mlir_module())
    dims = expand_dims(m, {"b": 5})
    assert dims == {"arg0.0": 10, "arg1.0": 6}
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((10, 3)).astype(np.float32), rng.standard_normal(6).astype(np.float32)
    want = exp.call(x, y)
    got = shlo.run(m, x, y)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, np.asarray(w), rtol=1e-5, atol=1e-6)


@_needs_jax
def test_unknown_dimension_names_are_usage_errors():
    import stablehlo_ref as shlo
    fn, shapes, _ = _programs()["affine"]
    m = shlo.parse(_export(fn, *shapes).mlir_module())
    with pytest.raises(UsageError, match=r"no symbolic dimension 'q'.*symbolic dimensions: b"):
        expand_dims(m, {"q": 3})
    assert expand_dims(m, {"arg0.0": 11}) == {"arg0.0": 11}
    assert expand_dims(m, {"2*b + 1": 11}) == {"arg0.0": 11}          # an expression solved for b
    with pytest.raises(UsageError, match="no size of b makes 2\\*b \\+ 1 = 10"):
        expand_dims(m, {"2*b + 1": 10})
    with pytest.raises(UsageError, match="b = 5 is given too"):
        expand_dims(m, {"b": 5, "2*b + 1": 9})
    assert expand_dims(m, {"b": 5, "arg0.0": 7}) == {"arg0.0": 7}    # an explicit argI.D wins
