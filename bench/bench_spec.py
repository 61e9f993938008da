"""Time loading the whole op spec (YAML + JSON Schema validation) in fresh processes.

Run: python bench/bench_spec.py [runs]
Prints the median and the best wall time of `spec.load()` measured inside a
fresh interpreter (imports included), and the whole process wall time.
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
from stablehlo_ref import spec
s = spec.load()
t1 = time.perf_counter()
print(t1 - t0, len(s.ops))
"""


def main(runs: int = 7) -> None:
    inner, outer = [], []
    n_ops = 0
    for _ in range(runs):
        t = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", CHILD], cwd=REPO, capture_output=True, text=True, check=True).stdout
        outer.append(time.perf_counter() - t)
        secs, n = out.split()
        inner.append(float(secs))
        n_ops = int(n)
    print(f"spec.load() in a fresh process ({n_ops} ops, {runs} runs): "
          f"median {statistics.median(inner) * 1000:.0f} ms, best {min(inner) * 1000:.0f} ms "
          f"(imports included); whole process median {statistics.median(outer) * 1000:.0f} ms")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 7)
