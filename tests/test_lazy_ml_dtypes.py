"""ml_dtypes (0.5-1 s to import) is imported only when a program, array or check needs one of
the element types it stores: a run of an f32 program never imports it, and everything that
needs it still works when it is imported late."""
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _fresh(code: str) -> str:
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_running_an_f32_program_does_not_import_ml_dtypes(tmp_path):
    out = tmp_path / "out.npz"
    code = ("import sys\n"
            "from stablehlo_ref.cli import main\n"
            f"rc = main(['run', 'examples/mlp.mlir', '--inputs', 'examples/mlp_inputs.npz', '--output', {str(out)!r}])\n"
            "print(rc, 'ml_dtypes' in sys.modules)\n")
    assert _fresh(code).splitlines()[-1].split() == ["0", "False"]


def test_types_it_stores_load_it_at_first_use():
    code = ("import sys\n"
            "import numpy as np\n"
            "import stablehlo_ref as shlo\n"
            "from stablehlo_ref.ir.types import element_type, element_type_for_dtype\n"
            "assert 'ml_dtypes' not in sys.modules\n"
            "assert element_type_for_dtype(np.float32).name == 'f32'\n"
            "m = shlo.parse('func.func @main(%x: tensor<2xbf16>) -> tensor<2xbf16> {\\n'\n"
            "               '  %c = stablehlo.constant dense<[1.5, -2.0]> : tensor<2xbf16>\\n'\n"
            "               '  %r = stablehlo.add %x, %c : tensor<2xbf16>\\n'\n"
            "               '  return %r : tensor<2xbf16>\\n}\\n')\n"
            "import ml_dtypes\n"
            "x = np.array([1.0, 2.0], dtype=ml_dtypes.bfloat16)\n"
            "(r,) = shlo.run(m, x)\n"
            "assert r.dtype == ml_dtypes.bfloat16 and r.tolist() == [2.5, 0.0], r\n"
            "assert element_type_for_dtype(ml_dtypes.float8_e4m3fn).name == 'f8E4M3FN'\n"
            "assert element_type('f8E8M0FNU').dtype == np.dtype(ml_dtypes.float8_e8m0fnu)\n"
            "print('ok')\n")
    assert _fresh(code).strip() == "ok"


def test_an_ml_dtypes_array_is_known_before_any_element_type_loaded_it():
    code = ("import ml_dtypes, numpy as np\n"
            "from stablehlo_ref.ir.types import element_type_for_dtype\n"
            "print(element_type_for_dtype(np.dtype(ml_dtypes.bfloat16)).name)\n")
    assert _fresh(code).strip() == "bf16"
