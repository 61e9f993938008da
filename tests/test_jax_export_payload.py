"""jax.export payloads (FlatBuffer `Exported` tables): the StableHLO artifact inside is read by
`load` / `load_bytes`; bad bytes raise only project errors. No jax needed: the payloads are
built here field by field (the interop tests use real ones)."""
from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import stablehlo_ref as shr
from stablehlo_ref.errors import ParseError, SerializationError, StableHLOError
from stablehlo_ref.serialization.jax_export import read_jax_exported

_PROG = """func.func @main(%a: tensor<3xf32>) -> tensor<3xf32> {
  %0 = stablehlo.add %a, %a : tensor<3xf32>
  func.return %0 : tensor<3xf32>
}"""


def _payload(artifact: bytes, name: str = "f", platforms=("cpu",)) -> bytes:
    """A FlatBuffer with root table Exported: slot 1 function_name, 9 platforms, 13 the module."""
    body = bytearray()

    def put_vector(data: bytes) -> int:
        while len(body) % 4:
            body.append(0)
        at = len(body)
        body.extend(struct.pack("<I", len(data)) + data)
        return at

    name_at = put_vector(name.encode())
    plat_vec = put_vector(b"\0" * (4 * len(platforms)))      # offsets patched below (forward only)
    body[plat_vec:plat_vec + 4] = struct.pack("<I", len(platforms))
    for i, p in enumerate(platforms):
        s = put_vector(p.encode())
        here = plat_vec + 4 + 4 * i
        body[here:here + 4] = struct.pack("<I", s - here)
    mod_at = put_vector(artifact)
    while len(body) % 4:
        body.append(0)
    # vtable (16 slots) then the table: soffset to vtable, then three uoffset fields
    nslots = 16
    vt = bytearray(struct.pack("<HH", 4 + 2 * nslots, 4 + 3 * 4))
    slots = [0] * nslots
    slots[1], slots[9], slots[13] = 4, 8, 12
    vt.extend(struct.pack(f"<{nslots}H", *slots))
    header = 4                                  # the root uoffset
    vt_at = header
    table_at = vt_at + len(vt)
    while table_at % 4:
        table_at += 1
    body_at = table_at + 16
    out = bytearray(struct.pack("<I", table_at))
    out.extend(vt)
    out.extend(b"\0" * (table_at - len(out)))
    out.extend(struct.pack("<i", table_at - vt_at))
    for field_no, target in ((1, name_at), (2, plat_vec), (3, mod_at)):
        here = table_at + 4 * field_no
        out.extend(struct.pack("<I", body_at + target - here))
    out.extend(body)
    return bytes(out)


def test_load_reads_the_artifact_inside(tmp_path):
    artifact = shr.serialize(shr.parse(_PROG), "1.0.0")
    data = _payload(artifact)
    info = read_jax_exported(data)
    assert info["function_name"] == "f" and info["platforms"] == ["cpu"]
    assert bytes(info["module"]) == artifact
    p = tmp_path / "f.jax_exported"
    p.write_bytes(data)
    m = shr.load(p)
    (out,) = shr.run(m, np.arange(3, dtype=np.float32))
    np.testing.assert_array_equal(out, [0, 2, 4])


def test_not_a_payload_is_one_error(tmp_path):
    p = tmp_path / "junk.bin"
    p.write_bytes(b"\x00\xff" * 40)
    with pytest.raises(ParseError, match="neither UTF-8 text, MLIR bytecode nor a jax.export payload"):
        shr.load(p)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.data())
def test_mutated_payloads_raise_only_project_errors(data):
    artifact = shr.serialize(shr.parse(_PROG), "1.0.0")
    payload = bytearray(_payload(artifact))
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(payload) - 1))
        payload[i] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(payload)))
    try:
        shr.load_bytes(bytes(payload[:cut]), "fuzz")
    except StableHLOError:
        pass
