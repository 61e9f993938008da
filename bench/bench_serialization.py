"""Portable-artifact read/write throughput: ours vs jaxlib's serializer.

    python bench/bench_serialization.py [--ops 10000] [--const-mb 100] [--repeat 3] [--profile N]
    python bench/bench_serialization.py --cpu --ours-from ../main   # another checkout's serializer

Two programs: a chain of N elementwise ops (op-count bound) and a module holding
`--const-mb` MB of f32 constants (data bound). For each, write (module in memory -> artifact
bytes at 1.0.0) and read (bytes -> module in memory), best of `--repeat`, in MB/s of
artifact bytes, and the ratio ours/jaxlib (how many times faster jaxlib is). `--profile N` also
prints, per program, cProfile's N most expensive functions (by own time) of our write and read.
`--cpu` times process CPU time instead of wall-clock time (steadier on a shared machine);
`--ours-from DIR` times the serializer of another checkout (for before/after: run both, one
after the other, and compare the ratios, each against jaxlib timed in the same process)."""
from __future__ import annotations

import argparse
import cProfile
import gc
import pstats
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
os.environ.setdefault("JAX_PLATFORMS", "cpu")


def _import_checkout(root: str):
    """Import stablehlo_ref from checkout `root`, its top-level folders (serialization/,
    conformance/, spec/) as the subpackages pyproject.toml maps them to (an editable install
    would otherwise supply this checkout's)."""
    import importlib.util
    root = os.path.abspath(root)
    sys.path.insert(0, root)
    import stablehlo_ref
    if os.path.dirname(os.path.dirname(os.path.abspath(stablehlo_ref.__file__))) != root:
        raise SystemExit(f"stablehlo_ref was imported from {stablehlo_ref.__file__} already")
    for sub, folder in (("specdata", "spec"), ("serialization", "serialization"), ("conformance", "conformance")):
        path = os.path.join(root, folder)
        init = os.path.join(path, "__init__.py")
        if os.path.isdir(os.path.join(root, "stablehlo_ref", sub)) or not os.path.exists(init):
            continue
        spec = importlib.util.spec_from_file_location(f"stablehlo_ref.{sub}", init, submodule_search_locations=[path])
        mod = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = mod
        setattr(stablehlo_ref, sub, mod)
        spec.loader.exec_module(mod)


if "--ours-from" in sys.argv:
    _import_checkout(sys.argv[sys.argv.index("--ours-from") + 1])

import stablehlo_ref as shr  # noqa: E402
from stablehlo_ref.ir.attributes import DenseElementsAttr  # noqa: E402


def chain_text(n: int) -> str:
    lines = ["func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {"]
    prev = "%a"
    ops = ["add", "multiply", "subtract", "maximum"]
    for i in range(n):
        lines.append(f"  %v{i} = stablehlo.{ops[i % 4]} {prev}, %b : tensor<4xf32>")
        prev = f"%v{i}"
    lines += [f"  func.return {prev} : tensor<4xf32>", "}"]
    return "\n".join(lines) + "\n"


def const_module(mb: int):
    """`mb` MB of f32 constants in 8 tensors (built directly: no 100 MB text to parse)."""
    n = 8
    per = mb * (1 << 20) // 4 // n
    text = ["func.func @main() -> (" + ", ".join([f"tensor<{per}xf32>"] * n) + ") {"]
    for i in range(n):
        text.append(f"  %c{i} = stablehlo.constant dense<0.0> : tensor<{per}xf32>")
    text.append("  func.return " + ", ".join(f"%c{i}" for i in range(n)) + " : " + ", ".join([f"tensor<{per}xf32>"] * n))
    text.append("}")
    m = shr.parse("\n".join(text) + "\n")
    rng = np.random.default_rng(0)
    for i, op in enumerate(m.body.operations[0].regions[0].blocks[0].operations[:n]):
        t = op.results[0].type
        op.attributes["value"] = DenseElementsAttr(t, rng.standard_normal(per).astype(np.float32))
    return m


_CLOCK = [time.perf_counter]


def best(fn, repeat):
    clock = _CLOCK[0]
    times = []
    for _ in range(repeat):
        gc.collect()
        gc.disable()
        try:
            t0 = clock()
            r = fn()
            times.append(clock() - t0)
        finally:
            gc.enable()
    return min(times), r


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--ops", type=int, default=10000)
    ap.add_argument("--const-mb", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--target", default="1.0.0")
    ap.add_argument("--profile", type=int, default=0, metavar="N",
                    help="print the N functions with the most own time in our write and read")
    ap.add_argument("--cpu", action="store_true", help="time process CPU time (default: wall clock)")
    ap.add_argument("--ours-from", default=None, metavar="DIR", help="time the serializer of this checkout")
    a = ap.parse_args(argv)
    if a.cpu:
        _CLOCK[0] = time.process_time
    import stablehlo_ref.serialization as ser
    print(f"(ours: {os.path.dirname(os.path.dirname(os.path.abspath(shr.__file__)))}, serializer from "
          f"{os.path.dirname(os.path.abspath(ser.__file__))}; "
          f"{'process CPU' if a.cpu else 'wall-clock'} time, best of {a.repeat})")
    try:
        from jax._src.interpreters import mlir as jmlir
        from jaxlib.mlir.dialects import stablehlo
        ctx = jmlir.make_ir_context()
    except ImportError:
        ctx = None
        print("jaxlib not installed: ours only")
    cases = [(f"{a.ops}-op chain", shr.parse(chain_text(a.ops))), (f"{a.const_mb} MB constants", const_module(a.const_mb))]
    print(f"{'program':<20} {'artifact':>10} {'ours write':>12} {'jaxlib write':>13} {'ratio':>7} {'ours read':>12} {'jaxlib read':>12} {'ratio':>7}")
    for name, m in cases:
        tw, data = best(lambda: shr.serialize(m, a.target), a.repeat)
        tr, _ = best(lambda: shr.deserialize(data), a.repeat)
        mb = len(data) / 1e6
        row = f"{name:<20} {mb:>8.1f}MB {mb / tw:>9.1f}MB/s"
        if ctx is not None:
            with ctx:
                jm = stablehlo.deserialize_portable_artifact(ctx, data)
                jw, _ = best(lambda: stablehlo.serialize_portable_artifact(jm, a.target), a.repeat)
                jr, _ = best(lambda: stablehlo.deserialize_portable_artifact(ctx, data), a.repeat)
            row += f" {mb / jw:>10.1f}MB/s {tw / jw:>6.2f}x {mb / tr:>9.1f}MB/s {mb / jr:>9.1f}MB/s {tr / jr:>6.2f}x"
            row += f"   (ms: write {tw * 1e3:.1f} vs {jw * 1e3:.1f}, read {tr * 1e3:.1f} vs {jr * 1e3:.1f})"
        else:
            row += f" {'-':>13} {'-':>7} {mb / tr:>9.1f}MB/s   (ms: write {tw * 1e3:.1f}, read {tr * 1e3:.1f})"
        print(row, flush=True)
        if a.profile:
            for what, fn in (("write", lambda: shr.serialize(m, a.target)), ("read", lambda: shr.deserialize(data))):
                print(f"--- profile: {name}, ours {what}")
                gc.collect()
                gc.disable()
                pr = cProfile.Profile()
                pr.enable()
                fn()
                pr.disable()
                gc.enable()
                pstats.Stats(pr, stream=sys.stdout).sort_stats("tottime").print_stats(a.profile)
    print("ratio = our time / jaxlib's time (how many times faster jaxlib is)")


if __name__ == "__main__":
    main()
