"""Time loading the whole op spec (YAML + JSON Schema validation) in fresh processes.

Run: python bench/bench_spec.py [runs]

Each run starts a fresh interpreter and measures, separately,
  * the import of the ``stablehlo_ref`` package itself (its ``__init__``, not the spec), and
  * ``from stablehlo_ref import spec; spec.load()`` after that: the spec's own cost,
    including the imports of yaml and jsonschema, reading, validating and building every record.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

CHILD = """
import time
t0 = time.perf_counter()
import stablehlo_ref
t1 = time.perf_counter()
from stablehlo_ref import spec
s = spec.load()
t2 = time.perf_counter()
print(t1 - t0, t2 - t1, len(s.ops))
"""


def main(runs: int = 7) -> None:
    pkg, load, whole = [], [], []
    n_ops = 0
    for _ in range(runs):
        t = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", CHILD], cwd=REPO, capture_output=True, text=True, check=True).stdout
        whole.append(time.perf_counter() - t)
        a, b, n = out.split()
        pkg.append(float(a))
        load.append(float(b))
        n_ops = int(n)
    ms = lambda xs: f"median {statistics.median(xs) * 1000:.0f} ms, best {min(xs) * 1000:.0f} ms"
    print(f"spec import + load ({n_ops} ops, {runs} fresh processes): {ms(load)}")
    print(f"stablehlo_ref package import before it (not the spec's): {ms(pkg)}")
    print(f"whole process: {ms(whole)}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 7)
