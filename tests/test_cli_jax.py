"""`inspect` on a jax.export payload with a symbolic dimension (needs jax)."""
import json

import pytest

jax = pytest.importorskip("jax")

from stablehlo_ref.cli import main  # noqa: E402


def test_inspect_jax_export_payload(tmp_path, capsys):
    import jax.numpy as jnp
    from jax import export

    def f(x, w):
        return jnp.tanh(x @ w)
    exp = export.export(jax.jit(f))(jax.ShapeDtypeStruct(export.symbolic_shape("b, 4"), jnp.float32),
                                    jax.ShapeDtypeStruct((4, 3), jnp.float32))
    p = tmp_path / "f.jaxexp"
    p.write_bytes(exp.serialize())
    assert main(["inspect", "--json", str(p)]) == 0
    info = json.loads(capsys.readouterr().out)
    j = info["jax_export"]
    assert info["format"] == "jax.export payload" and j["function_name"] == "f"
    assert j["platforms"] == list(exp.platforms)
    assert j["calling_convention_version"] == exp.calling_convention_version
    assert j["in_shapes"] == [["b", "4"], ["4", "3"]] and j["out_shapes"] == [["b", "3"]]
    assert j["symbolic_dims"] == ["b"] and j["nr_devices"] == 1
    assert info["entry"]["arguments"][0]["type"] == "tensor<?x4xf32>"
    assert info["custom_call_targets"] == {"shape_assertion": 1}
    assert main(["inspect", str(p)]) == 0
    assert "symbolic dimensions: b" in capsys.readouterr().out
