"""Benchmark our interpreter on model-scale programs generated with jax (an MLP, a small
CNN, an attention block, a cumsum spelled as reduce_window, a scan, loop-heavy programs
(while, fori, scan, random, sort/top_k, cumulative ops, dynamic_update_slice/segment_sum in a
loop, an LSTM), LAPACK-backed linear algebra, gradients, and programs written with flax,
optax and equinox when they are installed) against XLA CPU (jax itself) and upstream's C++
reference interpreter (jaxlib's `stablehlo.eval_module`, in a subprocess, with a timeout).

    python bench/bench_models.py [--only mlp,cnn] [--timeout 60] [--no-cpp] [--json OUT]
    python bench/bench_models.py --ours-from ../other-checkout   # time another version of ours

Needs jax/jaxlib (`pip install -e .[interop]`). For each program it prints the times and
ratios, and whether our results match XLA's (and the C++ interpreter's) within
tolerance. Both sides are timed in their steady state: XLA's execute after its compile, ours
after the warm-up runs its compile tier needs (`--warmup`); the compile (XLA) and the first
run (ours, which analyses and plans as it goes) are printed beside them. The timed runs of
the two alternate (rounds of one run of ours and enough of XLA's for at least 20 in all,
`--reps` rounds and at least `--min-time` seconds of them; the best of each side is kept), so
that a ratio is measured over the same stretch of time on both sides.
"""
from __future__ import annotations

import os

# The environment is left as a user has it (no OPENBLAS_NUM_THREADS): the interpreter
# chooses BLAS threads per call itself (stablehlo_ref/interpreter/blas.py).

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

os.environ.setdefault("JAX_PLATFORMS", "cpu")

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO))
if "--ours-from" in sys.argv:
    # another checkout's stablehlo_ref (e.g. main, for before/after numbers in one session)
    sys.path.insert(0, str(Path(sys.argv[sys.argv.index("--ours-from") + 1]).resolve()))

import numpy as np  # noqa: E402

import peers  # noqa: E402
import models  # noqa: E402

RTOL, ATOL = 2e-4, 2e-5


def best_of(fn, reps):
    best = None
    out = None
    for _ in range(reps):
        t0 = time.perf_counter()
        out = fn()
        dt = time.perf_counter() - t0
        best = dt if best is None else min(best, dt)
    return best, out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", choices=("models", "survey", "all", "torch"), default="models",
                    help="models: the programs issue 15's targets are measured on (default); "
                         "survey: a wider set of jax/flax/optax/equinox programs "
                         "(bench/models_survey.py); all: both; torch: PyTorch programs "
                         "through torchax (bench/models_torch.py; needs torch and torchax)")
    ap.add_argument("--only", default="", help="comma-separated subset of: " + ",".join(models.PROGRAMS)
                    + " (with --set survey or all, also of bench/models_survey.py's)")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds for the C++ interpreter per program")
    ap.add_argument("--no-cpp", action="store_true", help="skip the C++ interpreter")
    ap.add_argument("--reps", type=int, default=3, help="repetitions (best time is reported)")
    ap.add_argument("--min-time", type=float, default=1.0,
                    help="keep alternating rounds for at least this many seconds a program "
                         "(default 1.0; best times over the longer window)")
    ap.add_argument("--warmup", type=int, default=None,
                    help="runs of ours before the timed ones (default: as many as the "
                         "interpreter's compile tier needs, so that ours is timed in its steady "
                         "state, as XLA's execute is timed after its compile)")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--ours-from", default=None, help="import stablehlo_ref from this checkout")
    args = ap.parse_args(argv)
    warmup = args.warmup if args.warmup is not None else steady_state_runs()
    if not peers.jax_available():
        print("bench_models needs jax and jaxlib: pip install -e .[interop]", file=sys.stderr)
        return 2
    import jax

    programs, needs = {}, {}
    if args.set in ("models", "all"):
        programs.update(models.PROGRAMS)
        needs.update(models.NEEDS)
    if args.set in ("survey", "all"):
        import models_survey
        programs.update(models_survey.SURVEY)
        needs.update(models_survey.NEEDS)
    if args.set == "torch":
        import models_torch
        programs.update(models_torch.TORCH)
        needs.update(models_torch.NEEDS)
    names = [n for n in args.only.split(",") if n] or list(programs)
    unknown = [n for n in names if n not in programs]
    if unknown:
        print(f"unknown program(s) {unknown}; choose from {list(programs)}", file=sys.stderr)
        return 2
    # warm up our parser and interpreter (imports, spec loading) outside the timed runs
    peers.ours_run(peers.ours_parse(models.lower(lambda x: x + 1, [np.ones(2, np.float32)])),
                   [np.ones(2, np.float32)])
    worker = None if args.no_cpp else peers.PeerWorker()
    records = []
    try:
        for key in names:
            missing = models.missing_packages(key, needs)
            if missing:
                print(f"{key:22s} skipped: {', '.join(missing)} not installed")
                continue
            try:
                name, fn, fargs = programs[key]()
            except Exception as e:  # a program the installed jax/flax cannot build
                print(f"{key:22s} skipped: {type(e).__name__}: {str(e)[:100]}")
                continue
            text = models.lower(fn, fargs)
            rec = {"program": name, "ops": text.count(" = ")}
            records.append(rec)

            jitted = jax.jit(fn)
            t0 = time.perf_counter()
            compiled = jitted.lower(*fargs).compile()
            rec["xla_compile"] = time.perf_counter() - t0
            xla = lambda: jax.block_until_ready(compiled(*fargs))   # noqa: E731
            _, ref = best_of(xla, 3)           # (XLA's first runs pay one-off costs)
            ref = [np.asarray(r) for r in jax.tree_util.tree_leaves(ref)]
            # XLA's runs (at least 20 in all) and ours alternate, round by round, so that a
            # stretch of a slower machine (a busy neighbour, a frequency change) lands on
            # both sides of a ratio alike, not on whichever side was being timed then
            per_round = -(-20 // max(1, args.reps))
            xla_best = None

            def xla_round():
                nonlocal xla_best
                t, _ = best_of(xla, per_round)
                xla_best = t if xla_best is None else min(xla_best, t)

            try:
                t0 = time.perf_counter()
                module = peers.ours_parse(text)
                rec["ours_parse"] = time.perf_counter() - t0
                t0 = time.perf_counter()
                peers.ours_run(module, fargs)
                rec["ours_first"] = time.perf_counter() - t0
                for _ in range(max(0, warmup - 1)):
                    peers.ours_run(module, fargs)
                ours_best = None
                rounds = 0
                t_start = time.perf_counter()
                # at least --reps rounds, and rounds for at least --min-time seconds (this
                # machine has slower stretches of a second or more: a longer window holds a
                # faster stretch for both sides), at most 50 times --reps
                while rounds < max(1, args.reps) or (
                        time.perf_counter() - t_start < args.min_time
                        and rounds < 50 * max(1, args.reps)):
                    xla_round()
                    # (as many back-to-back runs as XLA's round, best kept: a single run of
                    # ours right after XLA's ran with the caches XLA's runs had just taken,
                    # 1.2-1.4x slower than a second run, while XLA's best was a second run)
                    t, ours = best_of(lambda: peers.ours_run(module, fargs), per_round)
                    ours_best = t if ours_best is None else min(ours_best, t)
                    rounds += 1
                rec["rounds"] = rounds
                rec["ours_run"] = ours_best
                rec["ours_vs_xla"] = peers.compare_lists(ours, ref, rtol=RTOL, atol=ATOL)
            except Exception as e:   # reported per program
                rec["ours_error"] = f"{type(e).__name__}: {e}"[:300]
                ours = None
            if xla_best is None:
                xla_round()
            rec["xla_run"] = xla_best

            if worker is not None:
                r = worker.call("cpp", text, fargs, timeout=args.timeout)
                rec["cpp_status"] = r.status
                if r.status == "ok":
                    rec["cpp_run"] = r.times["run"]
                    rec["cpp_vs_xla"] = peers.compare_lists(r.outputs, ref, rtol=RTOL, atol=ATOL)
                    if ours is not None:
                        rec["ours_vs_cpp"] = peers.compare_lists(ours, r.outputs, rtol=RTOL, atol=ATOL)
                else:
                    rec["cpp_error"] = r.message
                    if r.status == "timeout":
                        rec["cpp_run_at_least"] = args.timeout
            report(rec)
    finally:
        if worker is not None:
            worker.close()
    summary(records)
    if args.json:
        args.json.write_text(json.dumps(records, indent=1))
        print(f"wrote {args.json}")
    return 0


def steady_state_runs() -> int:
    """How many runs of a program our interpreter takes to reach its steady state: a block
    is compiled on its run after `plan._COMPILE_AFTER_RUNS` (older checkouts: 4)."""
    try:
        from stablehlo_ref.interpreter import plan
        return int(getattr(plan, "_COMPILE_AFTER_RUNS", 4)) + 1
    except Exception:  # noqa: BLE001 - an older layout
        return 5


def summary(records):
    ratios = [(r["program"], r["ours_run"] / r["xla_run"]) for r in records if r.get("ours_run")]
    if not ratios:
        return
    geo = float(np.exp(np.mean([np.log(x) for _, x in ratios])))
    worst = max(ratios, key=lambda t: t[1])
    print(f"ours/xla-run over {len(ratios)} programs: geometric mean {geo:.2f}x, "
          f"max {worst[1]:.1f}x ({worst[0]}); above 20x: "
          f"{[n for n, x in ratios if x > 20] or 'none'}")
    first = [r["ours_first"] / r["xla_run"] for r in records if r.get("ours_first")]
    if first:
        print(f"(first runs of ours, which analyse and plan as they go, over XLA's run: "
              f"geometric mean {float(np.exp(np.mean(np.log(first)))):.2f}x)")
    import stablehlo_ref
    print(f"(ours: {Path(stablehlo_ref.__file__).resolve().parent.parent})")


def report(rec):
    f = peers.fmt_s
    ours = rec.get("ours_run")
    line = [f"{rec['program']:22s} ({rec['ops']} ops)"]
    if ours is None:
        line.append(f"ours: ERROR {rec.get('ours_error', '')[:100]}")
    else:
        line.append(f"ours {f(ours)} (first run {f(rec['ours_first'])}, +parse {f(rec['ours_parse'])})")
    line.append(f"xla run {f(rec['xla_run'])} compile {f(rec['xla_compile'])}")
    if "cpp_run" in rec:
        line.append(f"c++ {f(rec['cpp_run'])}")
    elif "cpp_status" in rec:
        line.append(f"c++ {rec['cpp_status']}" + (f" (>{rec['cpp_run_at_least']:g}s)"
                                                  if "cpp_run_at_least" in rec else
                                                  f" ({rec.get('cpp_error', '')[:60]})"))
    print("  ".join(line))
    if ours:
        ratios = [f"ours/xla-run {ours / rec['xla_run']:.1f}x",
                  f"ours/(xla compile+run) {ours / (rec['xla_compile'] + rec['xla_run']):.2f}x"]
        cpp = rec.get("cpp_run") or rec.get("cpp_run_at_least")
        if cpp:
            ratios.append(f"c++/ours {'>' if 'cpp_run_at_least' in rec else ''}{cpp / ours:.1f}x")
        print("    " + "  ".join(ratios))
    checks = [f"{k}: {rec[k]}" for k in ("ours_vs_xla", "ours_vs_cpp", "cpp_vs_xla") if k in rec]
    if checks:
        print("    " + ";  ".join(c[:120] for c in checks))


if __name__ == "__main__":
    sys.exit(main())
