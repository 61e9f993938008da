import pytest

from stablehlo_ref.errors import LimitError, StableHLOError
from stablehlo_ref.limits import DEFAULT, Limits, check_tensor


def test_check_tensor_counts_and_refuses_before_allocation():
    assert check_tensor((2, 3), 32, "x") == 6
    assert check_tensor((), 32, "x") == 1
    assert check_tensor((0, 10**12), 32, "x") == 0
    with pytest.raises(LimitError) as e:
        check_tensor((10**15,), 32, "stablehlo.iota", "f.mlir:3:5")
    assert isinstance(e.value, StableHLOError)
    assert "--max-tensor-elements" in str(e.value) and "f.mlir:3:5" in str(e.value)
    with pytest.raises(LimitError, match="--max-tensor-bytes"):
        check_tensor((1 << 20,), 64, "c", limits=Limits(max_tensor_bytes=1 << 20))


def test_limits_replace_keeps_default():
    assert DEFAULT.replace(max_steps=5).max_steps == 5 and DEFAULT.max_steps is None
