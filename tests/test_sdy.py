"""Shardy (sdy) ops and attributes without jax: text round trip, artifacts round trip,
verifier errors, and the interpreter's manual computation on a 4-device mesh."""
from __future__ import annotations

import numpy as np
import pytest

import stablehlo_ref as shlo
from stablehlo_ref.errors import ParseError, VerificationError
from stablehlo_ref.serialization import deserialize, serialize

PROGRAM = """module @shmap attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  func.func public @main(%arg0: tensor<4x6xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}, {}p1], replicated={"y"}>}) -> (tensor<4x6xf32>, tensor<4x6xf32>) {
    %0 = sdy.sharding_constraint %arg0 <@mesh, [{"x"}, {"y":(1)2}]> : tensor<4x6xf32>
    %1 = sdy.manual_computation(%0) in_shardings=[<@mesh, [{"x"}, {"y"}]>] out_shardings=[<@mesh, [{"x"}, {"y"}]>] manual_axes={"x", "y"} (%arg1: tensor<2x3xf32>) {
      %2 = "stablehlo.all_reduce"(%arg1) <{channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>, replica_groups = dense<[[0, 1], [2, 3]]> : tensor<2x2xi64>, use_global_device_ids}> ({
      ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
        %3 = stablehlo.add %arg2, %arg3 : tensor<f32>
        stablehlo.return %3 : tensor<f32>
      }) : (tensor<2x3xf32>) -> tensor<2x3xf32>
      sdy.return %2 : tensor<2x3xf32>
    } : (tensor<4x6xf32>) -> tensor<4x6xf32>
    %4 = stablehlo.custom_call @foo(%1) {sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j]) {i=4, j=6} reduction={j}, custom>} : (tensor<4x6xf32>) -> tensor<4x6xf32>
    return %1, %0 : tensor<4x6xf32>, tensor<4x6xf32>
  }
}
"""


def test_text_round_trip():
    m = shlo.parse(PROGRAM)
    text = shlo.print_module(m)
    assert text == shlo.print_module(shlo.parse(text))
    assert '#sdy.sharding<@mesh, [{"x", ?}, {}p1], replicated={"y"}>' in text
    assert '<@mesh, [{"x"}, {"y":(1)2}]>' in text
    assert "#sdy.op_sharding_rule<([i, j])->([i, j]) {i=4, j=6} reduction={j}, custom>" in text
    generic = shlo.print_module(m, generic=True)
    assert '"sdy.mesh"() <{mesh = #sdy.mesh<["x"=2, "y"=2]>, sym_name = "mesh"}>' in generic
    assert 'manual_axes = #sdy<manual_axes{"x", "y"}>' in generic
    assert shlo.print_module(shlo.parse(generic)) == text


def test_artifact_round_trip():
    m = shlo.parse(PROGRAM)
    data = serialize(m, target="1.9.0")
    back = deserialize(data)
    assert shlo.print_module(back, strip_debuginfo=True) == shlo.print_module(m, strip_debuginfo=True)
    assert serialize(back, target="1.9.0", strip_debuginfo=True) == serialize(m, target="1.9.0", strip_debuginfo=True)


def test_manual_computation_runs_per_device():
    m = shlo.parse(PROGRAM.replace(
        '    %4 = stablehlo.custom_call @foo(%1) {sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j]) {i=4, j=6} reduction={j}, custom>} : (tensor<4x6xf32>) -> tensor<4x6xf32>\n', ""))
    shlo.verify(m)
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    out, same = shlo.run(m, x)
    np.testing.assert_array_equal(same, x)
    # devices (x, y) hold x[2x:2x+2, 3y:3y+3]; psum over y adds the two column halves of each
    # row block, and every device returns that sum as its block
    half = x[:, :3] + x[:, 3:]
    np.testing.assert_array_equal(out, np.concatenate([half, half], axis=1))


@pytest.mark.parametrize("bad, message", [
    ('<@nomesh, [{"x"}, {}]>', "unknown mesh @nomesh"),
    ('<@mesh, [{"z"}, {}]>', "unknown axis name 'z'"),
    ('<@mesh, [{"x"}]>', "1 dimension shardings, the tensor has rank 2"),
    ('<@mesh, [{"x"}, {"x"}]>', "used more than once"),
])
def test_verifier_rejects_bad_shardings(bad, message):
    text = PROGRAM.replace('<@mesh, [{"x"}, {"y":(1)2}]>', bad)
    with pytest.raises(VerificationError, match=message):
        shlo.verify(shlo.parse(text))


def test_manual_computation_local_types_are_checked():
    text = PROGRAM.replace("(%arg1: tensor<2x3xf32>)", "(%arg1: tensor<4x3xf32>)").replace(
        "(tensor<2x3xf32>) -> tensor<2x3xf32>", "(tensor<4x3xf32>) -> tensor<4x3xf32>").replace(
        "sdy.return %2 : tensor<2x3xf32>", "sdy.return %2 : tensor<4x3xf32>")
    with pytest.raises(VerificationError, match="C3"):
        shlo.verify(shlo.parse(text))


def test_unknown_sdy_attribute_is_a_parse_error():
    with pytest.raises(ParseError, match="unknown sdy attribute"):
        shlo.parse('module { func.func @f(%a: tensor<2xf32> {x = #sdy.bogus<1>}) { return } }')


# ----------------------------------------------------------------------------- generated attributes

from hypothesis import given, settings, strategies as st  # noqa: E402


@st.composite
def _sharded_program(draw):
    """A module with a generated mesh, `#sdy.sharding` argument attribute, sharding constraint
    and `#sdy.op_sharding_rule`, in the syntax MLIR prints."""
    names = draw(st.lists(st.sampled_from(["x", "y", "z", "w"]), min_size=1, max_size=3, unique=True))
    sizes = {n: draw(st.sampled_from([1, 2, 4])) for n in names}
    mesh = ", ".join(f'"{n}"={sizes[n]}' for n in names)
    free = list(names)
    dims = []
    for _ in range(2):
        k = draw(st.integers(0, min(2, len(free))))
        axes = []
        for _ in range(k):
            a = free.pop(draw(st.integers(0, len(free) - 1)))
            if sizes[a] == 4 and draw(st.booleans()):
                axes.append(f'"{a}":(1)2')
            else:
                axes.append(f'"{a}"')
        is_open = draw(st.booleans())
        body = ", ".join(axes + (["?"] if is_open else []))
        prio = f"p{draw(st.integers(0, 3))}" if draw(st.booleans()) else ""
        dims.append("{" + body + "}" + prio)
    repl = [a for a in free if draw(st.booleans())]
    sharding = f"<@mesh, [{', '.join(dims)}]" + (", replicated={" + ", ".join(f'"{a}"' for a in repl) + "}" if repl else "") + ">"
    factors = draw(st.lists(st.integers(1, 8), min_size=2, max_size=2))
    rule_tail = draw(st.sampled_from(["", " reduction={j}", " need_replication={i}", " reduction={j}, custom"]))
    rule = f"#sdy.op_sharding_rule<([i, j])->([i, j]) {{i={factors[0]}, j={factors[1]}}}{rule_tail}>"
    return f"""module @gen {{
  sdy.mesh @mesh = <[{mesh}]>
  func.func public @main(%arg0: tensor<8x8xf32> {{sdy.sharding = #sdy.sharding{sharding}}}) -> tensor<8x8xf32> {{
    %0 = sdy.sharding_constraint %arg0 {sharding} : tensor<8x8xf32>
    %1 = stablehlo.custom_call @foo(%0) {{sdy.sharding_rule = {rule}}} : (tensor<8x8xf32>) -> tensor<8x8xf32>
    return %1 : tensor<8x8xf32>
  }}
}}
""", sharding, rule


@settings(max_examples=40, deadline=None)
@given(_sharded_program())
def test_generated_sdy_attributes_round_trip(case):
    """The parser and printer, and the sdy codec of portable artifacts, round-trip generated
    meshes, shardings (sub-axes, open dims, priorities, replicated axes) and sharding rules."""
    text, sharding, rule = case
    m = shlo.parse(text)
    printed = shlo.print_module(m)
    assert sharding in printed and rule in printed
    assert shlo.print_module(shlo.parse(printed)) == printed
    data = serialize(m, target="1.9.0")
    back = deserialize(data)
    assert back == m
    assert shlo.print_module(back, strip_debuginfo=True) == shlo.print_module(m, strip_debuginfo=True)
    assert serialize(back, target="1.9.0") == data
