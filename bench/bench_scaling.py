"""How our interpreter's time and memory grow with program size and loop length, its cost
per op executed in a `while` body, and its peak memory on a program with large constants.

    python bench/bench_scaling.py                      # every part
    python bench/bench_scaling.py --const-mb 256       # smaller constants
    python bench/bench_scaling.py --ours-from ../main  # another checkout, for before/after

Parts (no jax needed):
- per-op cost: a `while` loop of 2,000 iterations whose body holds 50 scalar f32 ops (plus
  the counter); time / ops executed (each op of the condition and the body, every
  iteration). Printed with the cost of one numpy scalar add measured in the same run, to
  read the number against the machine's current speed.
- scaling: a chain of N elementwise ops on tensor<16xf32> (N = 10^3, 10^4, 10^5) and a loop
  of N iterations of a 10-op body (N = 10, 10^3, 10^5): run time (best of 3; parse not
  included) and peak memory of the run (tracemalloc, which numpy reports its buffers to).
- updates: a loop of N iterations writing one row of an N x 256 f32 buffer per iteration
  with dynamic_update_slice (N = 500, 2,000): time per iteration stays flat when the row is
  written in place, and grows with N when each update copies the buffer.
- large constants: four f32 constants of --const-mb/4 MB each (built in memory, not parsed)
  added together and reduced; peak memory of the run beyond the constants themselves.
"""
from __future__ import annotations

import argparse
import gc
import sys
import time
import timeit
import tracemalloc
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))
if "--ours-from" in sys.argv:
    sys.path.insert(0, str(Path(sys.argv[sys.argv.index("--ours-from") + 1]).resolve()))

import numpy as np  # noqa: E402

import stablehlo_ref  # noqa: E402


def loop_program(iters: int, k: int) -> str:
    lines, v = [], "%x"
    for j in range(k):
        op = ("add", "multiply", "subtract")[j % 3]
        lines.append(f"    %t{j} = stablehlo.{op} {v}, %x : tensor<f32>")
        v = f"%t{j}"
    body = "\n".join(lines)
    return f"""func.func @main(%x0: tensor<f32>) -> tensor<f32> {{
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%i = %c0, %x = %x0) : tensor<i32>, tensor<f32>
   cond {{
    %n = stablehlo.constant dense<{iters}> : tensor<i32>
    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  }} do {{
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i2 = stablehlo.add %i, %one : tensor<i32>
{body}
    stablehlo.return %i2, {v} : tensor<i32>, tensor<f32>
  }}
  return %r#1 : tensor<f32>
}}"""


def chain_program(n: int) -> str:
    lines, v = [], "%a"
    for j in range(n):
        op = ("add", "multiply", "subtract", "maximum")[j % 4]
        lines.append(f"  %t{j} = stablehlo.{op} {v}, %a : tensor<16xf32>")
        v = f"%t{j}"
    return ("func.func @main(%a: tensor<16xf32>) -> tensor<16xf32> {\n" + "\n".join(lines)
            + f"\n  return {v} : tensor<16xf32>\n}}\n")


def timed(module, args, reps=3):
    best = None
    for _ in range(reps):
        gc.disable()
        try:
            t0 = time.perf_counter()
            stablehlo_ref.run(module, *args)
            dt = time.perf_counter() - t0
        finally:
            gc.enable()
        best = dt if best is None else min(best, dt)
    return best


def peak_of_run(module, args):
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    stablehlo_ref.run(module, *args)
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    return peak


def fmt_bytes(n):
    for unit in ("B", "KB", "MB", "GB"):
        if abs(n) < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024


def per_op_cost():
    iters, k = 2000, 50
    m = stablehlo_ref.parse(loop_program(iters, k))
    x = np.array(0.5, np.float32)
    stablehlo_ref.run(m, x)
    t = timed(m, [x], reps=5)
    ops = iters * (k + 2 + 2)        # body: constant, add, k ops; condition: constant, compare
    a, b = np.float32(0.5), np.float32(0.25)
    scalar_add = min(timeit.repeat("a + b", globals={"a": a, "b": b}, number=100000, repeat=5)) / 100000
    print(f"per-op cost in a while body: {t / ops * 1e6:.3f} us per op executed "
          f"({iters} iterations x {k + 4} ops in {t * 1e3:.1f} ms); one numpy scalar add "
          f"now costs {scalar_add * 1e6:.3f} us")


def scaling():
    print("\n| program | N | run time | per unit | peak memory of the run |")
    print("| --- | --- | --- | --- | --- |")
    a = np.arange(16, dtype=np.float32) / 16
    for n in (1000, 10_000, 100_000):
        m = stablehlo_ref.parse(chain_program(n))
        t = timed(m, [a])
        peak = peak_of_run(m, [a])
        print(f"| chain of N ops (tensor<16xf32>) | {n:,} | {t * 1e3:.1f} ms | "
              f"{t / n * 1e6:.2f} us/op | {fmt_bytes(peak)} |")
    x = np.array(0.5, np.float32)
    for n in (10, 1000, 100_000):
        m = stablehlo_ref.parse(loop_program(n, 10))
        t = timed(m, [x])
        peak = peak_of_run(m, [x])
        print(f"| while, N iterations of 14 ops | {n:,} | {t * 1e3:.2f} ms | "
              f"{t / n * 1e6:.2f} us/iteration | {fmt_bytes(peak)} |")


def large_constants(total_mb: int):
    from stablehlo_ref.ir.attributes import DenseElementsAttr
    from stablehlo_ref.ir.types import TensorType, element_type
    n = total_mb * (1 << 20) // 4 // 4              # f32 elements per constant
    src = f"""func.func @main() -> tensor<f32> {{
  %c0 = stablehlo.constant dense<0.0> : tensor<{n}xf32>
  %c1 = stablehlo.constant dense<0.0> : tensor<{n}xf32>
  %c2 = stablehlo.constant dense<0.0> : tensor<{n}xf32>
  %c3 = stablehlo.constant dense<0.0> : tensor<{n}xf32>
  %s0 = stablehlo.add %c0, %c1 : tensor<{n}xf32>
  %s1 = stablehlo.add %s0, %c2 : tensor<{n}xf32>
  %s2 = stablehlo.add %s1, %c3 : tensor<{n}xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %r = stablehlo.reduce(%s2 init: %z) applies stablehlo.add across dimensions = [0] : (tensor<{n}xf32>, tensor<f32>) -> tensor<f32>
  return %r : tensor<f32>
}}"""
    m = stablehlo_ref.parse(src)
    ops = m.function("main").regions[0].blocks[0].operations
    t = TensorType((n,), element_type("f32"))
    for i in range(4):
        arr = np.full(n, 0.25 * (i + 1), np.float32)
        arr.flags.writeable = False
        ops[i].attributes["value"] = DenseElementsAttr(t, arr)
    consts = 4 * n * 4
    t0 = time.perf_counter()
    peak = peak_of_run(m, [])
    dt = time.perf_counter() - t0
    print(f"\nlarge constants: {fmt_bytes(consts)} of constants; peak memory of the run beyond "
          f"them {fmt_bytes(peak)} ({peak / consts:.2f}x the constants; {dt:.1f} s)")


def update_program(n: int, width: int = 256) -> str:
    return f"""func.func @main(%x: tensor<{width}xf32>) -> tensor<{n}x{width}xf32> {{
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %buf = stablehlo.broadcast_in_dim %z, dims = [] : (tensor<f32>) -> tensor<{n}x{width}xf32>
  %r:3 = stablehlo.while(%i = %c0, %h = %x, %b = %buf) : tensor<i32>, tensor<{width}xf32>, tensor<{n}x{width}xf32>
   cond {{
    %n = stablehlo.constant dense<{n}> : tensor<i32>
    %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }} do {{
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i2 = stablehlo.add %i, %one : tensor<i32>
    %h2 = stablehlo.sine %h : tensor<{width}xf32>
    %row = stablehlo.reshape %h2 : (tensor<{width}xf32>) -> tensor<1x{width}xf32>
    %zero = stablehlo.constant dense<0> : tensor<i32>
    %b2 = stablehlo.dynamic_update_slice %b, %row, %i, %zero : (tensor<{n}x{width}xf32>, tensor<1x{width}xf32>, tensor<i32>, tensor<i32>) -> tensor<{n}x{width}xf32>
    stablehlo.return %i2, %h2, %b2 : tensor<i32>, tensor<{width}xf32>, tensor<{n}x{width}xf32>
  }}
  return %r#2 : tensor<{n}x{width}xf32>
}}"""


def updates():
    print("\n| loop writing rows with dynamic_update_slice | N | run time | per iteration |")
    print("| --- | --- | --- | --- |")
    for n in (500, 2000):
        m = stablehlo_ref.parse(update_program(n))
        x = np.linspace(0, 1, 256).astype(np.float32)
        t = timed(m, [x], reps=3)
        print(f"| N iterations, N x 256 f32 buffer | {n:,} | {t * 1e3:.1f} ms | {t / n * 1e6:.1f} us |")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--const-mb", type=int, default=1024, help="total MB of constants (0: skip)")
    ap.add_argument("--only", default="perop,scaling,updates,constants")
    ap.add_argument("--ours-from", default=None, help="import stablehlo_ref from this checkout")
    args = ap.parse_args(argv)
    parts = args.only.split(",")
    print(f"(ours: {Path(stablehlo_ref.__file__).resolve().parent.parent})")
    if "perop" in parts:
        per_op_cost()
    if "scaling" in parts:
        scaling()
    if "updates" in parts:
        updates()
    if "constants" in parts and args.const_mb:
        large_constants(args.const_mb)
    return 0


if __name__ == "__main__":
    sys.exit(main())
