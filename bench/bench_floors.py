"""What the interpreter's numeric model costs against XLA, op by op: the floors under
bench_models.py's ratios.

    python bench/bench_floors.py                 # every part
    python bench/bench_floors.py --n 262144      # smaller arrays for the elementwise part

The interpreter computes f32 (and f16/bf16) transcendentals in f64 and rounds once to the
type, and accumulates f32 dots in f64 (`stablehlo_ref/interpreter/numerics.py`: compute and
accumulation dtypes); XLA CPU computes both in f32 with vectorized approximations. Each part
times, in one run and alternating the engines round by round, a one-op program jax lowers,
run by our interpreter (steady state: its compiled form) and by XLA (`jax.jit`), and prints
ours/XLA; beside it, numpy's own f32 kernel (what a faster model would call) and what the
model buys: how many results of each engine are not the correctly rounded value (mpmath at
113 bits):

- elementwise: exp, tanh, log, sin and jax.nn.sigmoid of --n f32 elements (ns/element), the
  first --samples of them checked against mpmath;
- dot: an f32 matmul of --dot x --dot by --dot (GFLOP/s), and how many of numpy's sgemm
  results differ from ours;
- small arrays in a loop: a `fori_loop` of 1,000 iterations whose body is 8 elementwise ops
  on f32[256] (per op executed), beside the same loop written by hand in numpy: the
  numpy-call floor of the loop programs.

Needs jax (the `interop` extra); prints a message and exits 2 without it.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
# (bench_models' set-up: jax on the CPU, the repository and --ours-from on the path)
from bench_models import best_of  # noqa: E402

import numpy as np  # noqa: E402

import peers  # noqa: E402
from stablehlo_ref.interpreter.numerics import ulp_difference  # noqa: E402
from stablehlo_ref.ir.types import ELEMENT_TYPES  # noqa: E402


def _best(fn, reps):
    return best_of(fn, reps)[0]


def race(ours, xla, rounds=7, reps=3):
    """Best times of `ours` and `xla`, alternated round by round (a slower stretch of the
    machine lands on both)."""
    o = x = None
    for _ in range(rounds):
        t = _best(xla, reps)
        x = t if x is None else min(x, t)
        t = _best(ours, reps)
        o = t if o is None else min(o, t)
    return o, x


def engines(fn, args):
    """(ours, xla, ours' results): our interpreter on the program jax lowers for `fn`, run
    once (its first run analyses and plans) and then timed; XLA's compiled function."""
    import jax
    lowered = jax.jit(fn).lower(*args)
    module = peers.ours_parse(lowered.as_text())
    out = peers.ours_run(module, args)
    compiled = lowered.compile()
    compiled(*args)
    return (lambda: peers.ours_run(module, args),
            lambda: jax.block_until_ready(compiled(*args)), out)


def _sigmoid_by_ops(v):
    """jax.nn.sigmoid as its program states it, `1 / (1 + exp(-x))`, each of the three ops
    correctly rounded to f32 (the program's own semantics, not the real sigmoid's)."""
    import mpmath as mp
    e = np.float32(float(mp.exp(-v)))
    return float(np.float32(1) / (np.float32(1) + e))


def elementwise(n, rounds, samples):
    import jax
    import jax.numpy as jnp
    import mpmath as mp
    r = np.random.default_rng(0)
    x = (r.standard_normal(n) * 3).astype(np.float32)
    pos = np.abs(x) + np.float32(1e-3)
    mp.prec = 113
    cases = [("exp", jnp.exp, np.exp, mp.exp, x), ("tanh", jnp.tanh, np.tanh, mp.tanh, x),
             ("log", jnp.log, np.log, mp.log, pos), ("sin", jnp.sin, np.sin, mp.sin, x),
             ("sigmoid", jax.nn.sigmoid, lambda v: np.float32(1) / (np.float32(1) + np.exp(-v)),
              _sigmoid_by_ops, x)]
    k = min(n, samples)
    print(f"elementwise, {n} f32 elements (ns/element; 'numpy f32': numpy's own f32 kernel; "
          f"'not CR': of {k} elements, how many results are not the correctly rounded value, "
          "by mpmath; for sigmoid, of each of its three ops)")
    print(f"  {'op':9s} {'ours':>7s} {'XLA':>7s} {'ours/XLA':>9s} {'numpy f32':>10s}   "
          f"not CR: {'ours':>5s} {'XLA':>5s} {'numpy':>5s}")
    for name, jf, nf, mf, arg in cases:
        ours, xla, out = engines(jf, [arg])
        o, t = race(ours, xla, rounds)
        nt = _best(lambda: nf(arg), 5)
        exact = np.array([float(mf(mp.mpf(float(v)))) for v in arg[:k]]).astype(np.float32)
        wrong = [int((np.asarray(r)[:k] != exact).sum())
                 for r in (out[0], xla(), nf(arg))]
        print(f"  {name:9s} {o / n * 1e9:7.2f} {t / n * 1e9:7.2f} {o / t:8.1f}x {nt / n * 1e9:10.2f}"
              f"           {wrong[0]:5d} {wrong[1]:5d} {wrong[2]:5d}")


def dot(m, rounds):
    r = np.random.default_rng(1)
    a = r.standard_normal((m, m)).astype(np.float32)
    b = r.standard_normal((m, m)).astype(np.float32)
    ours, xla, out = engines(lambda p, q: p @ q, [a, b])
    o, t = race(ours, xla, rounds)
    st = _best(lambda: a @ b, 5)
    flops = 2.0 * m ** 3
    d = ulp_difference(a @ b, np.asarray(out[0]), ELEMENT_TYPES["f32"])
    print(f"dot, f32 {m}x{m} @ {m}x{m} (GFLOP/s; 'sgemm': numpy's f32 matmul)")
    # (ulps apart says little where a sum cancels to near 0: the median of those that differ)
    nd = int((d > 0).sum())
    med = int(np.median(d[d > 0])) if nd else 0
    print(f"  ours {flops / o / 1e9:.1f}  XLA {flops / t / 1e9:.1f}  ours/XLA {o / t:.1f}x  "
          f"sgemm {flops / st / 1e9:.1f}; sgemm vs ours: {nd} of {d.size} differ "
          f"(median {med} ulp among them)")


def small_loop(rounds):
    import jax
    import jax.numpy as jnp
    iters, per = 1000, 8
    x = np.linspace(-1, 1, 256, dtype=np.float32)

    def body(i, v):
        v = v * jnp.float32(0.5) + jnp.float32(0.25)
        v = jnp.maximum(v, jnp.float32(-2)) - v * v
        return jnp.minimum(v, jnp.float32(2)) * jnp.float32(1.5) + jnp.float32(0.125)
    ours, xla, out = engines(lambda v: jax.lax.fori_loop(0, iters, body, v), [x])
    o, t = race(ours, xla, rounds, reps=1)
    # the same loop written by hand in numpy (f32 arrays and f32 scalars: the same ops)
    h, q, lo, hi, k, e = (np.float32(c) for c in (0.5, 0.25, -2, 2, 1.5, 0.125))
    maximum, minimum = np.maximum, np.minimum

    def by_hand():
        v = x
        for _ in range(iters):
            v = v * h + q
            v = maximum(v, lo) - v * v
            v = minimum(v, hi) * k + e
        return v
    nt = _best(by_hand, rounds)
    same = "the same bits" if by_hand().tobytes() == np.asarray(out[0]).tobytes() else "DIFFERENT bits"
    print(f"small arrays in a loop: {iters} iterations of {per} ops on f32[256]")
    print(f"  ours {o / (iters * per) * 1e6:.3f} us/op  XLA {t / (iters * per) * 1e6:.3f} us/op  "
          f"ours/XLA {o / t:.1f}x;  the loop written in numpy {nt / (iters * per) * 1e6:.3f} "
          f"us/op ({same}), ours/numpy {o / nt:.2f}x")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1 << 20, help="elements of the elementwise part")
    ap.add_argument("--dot", type=int, default=512, help="matrix size of the dot part")
    ap.add_argument("--rounds", type=int, default=7, help="alternated rounds per measurement")
    ap.add_argument("--samples", type=int, default=2000,
                    help="elements checked against mpmath per elementwise op")
    ap.add_argument("--ours-from", default=None, help="import stablehlo_ref from this checkout")
    args = ap.parse_args(argv)
    if not peers.jax_available():
        print("jax/jaxlib not importable (pip install -e .[interop])", file=sys.stderr)
        return 2
    if min(args.n, args.dot, args.rounds, args.samples) < 1:
        print("--n, --dot, --rounds and --samples must be positive", file=sys.stderr)
        return 2
    with np.errstate(all="ignore"):
        elementwise(args.n, args.rounds, args.samples)
        dot(args.dot, args.rounds)
        small_loop(args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
