"""Benchmark our interpreter against upstream's C++ reference interpreter (jaxlib's
`stablehlo.eval_module`) and XLA CPU on the upstream `testdata/` programs.

Each program's `@check.*` custom calls are removed and `@main` returns the checked values
instead (complex ones as real and imaginary parts), so every engine runs the same program;
the results are then compared in numpy. The C++ interpreter and XLA run in a worker
subprocess (an error in the C++ interpreter aborts its process; the worker is restarted).

    python bench/bench_interpreter.py [--limit N] [--pattern GLOB] [--json OUT]

By default only the programs our interpreter passes are run (those without an entry in
tests/known_failures/testdata.txt); --all runs every top-level program. Both interpreters
run each program --repeats times (ours from a fresh parse each time) and the best times are
kept (bench/README.md says why).
"""
from __future__ import annotations


# The environment is left as a user has it (no OPENBLAS_NUM_THREADS): the interpreter
# chooses BLAS threads per call itself (stablehlo_ref/interpreter/blas.py).

import argparse  # noqa: E402
import gc  # noqa: E402
import fnmatch  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO))
if "--ours-from" in sys.argv:
    # another checkout's stablehlo_ref (e.g. main, for before/after numbers in one session)
    sys.path.insert(0, str(Path(sys.argv[sys.argv.index("--ours-from") + 1]).resolve()))

import peers  # noqa: E402

DEFAULT_DIR = REPO.parent / "shared" / "stablehlo-tests" / "testdata"
KNOWN = REPO / "tests" / "known_failures" / "testdata.txt"


def known_failing_files() -> set:
    out = set()
    if KNOWN.exists():
        for line in KNOWN.read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                out.add(line.split("\t", 1)[0].split("#", 1)[0].rsplit("/", 1)[-1])
    return out


def select(directory: Path, pattern: str, include_failing: bool, limit):
    files = sorted(p for p in directory.glob("*.mlir") if fnmatch.fnmatch(p.name, pattern))
    if not include_failing:
        bad = known_failing_files()
        files = [p for p in files if p.name not in bad]
    return files[:limit] if limit else files


def run_ours(text: str, repeats: int = 1):
    """Parse and run `text` `repeats` times, each time from a fresh parse (so the per-op
    caches the interpreter keeps on a module's ops start empty every time, as the C++
    interpreter starts from a freshly parsed module in each of its runs); returns the best
    parse and run times and the last run's results."""
    best = None
    for _ in range(max(1, repeats)):
        # As timeit does, the garbage collector is off while timing (a collection of the
        # objects earlier parses left behind, tens of ms, would otherwise land on whichever
        # program happens to trigger it) and no collection is forced before: a forced full
        # collection right before the run made our tiny programs 2-3x slower to run (cold
        # caches, freed memory arenas), a cost the C++ side has no counterpart for.
        gc.disable()
        try:
            t0 = time.perf_counter()
            module = peers.ours_parse(text)
            t1 = time.perf_counter()
            outs = peers.ours_run(module)
            t2 = time.perf_counter()
        finally:
            gc.enable()
        times = {"parse": t1 - t0, "run": t2 - t1}
        best = times if best is None else {k: min(best[k], times[k]) for k in best}
    return best, outs


def run_cpp(worker, text: str, repeats: int, timeout: float):
    """The C++ interpreter on `text` `repeats` times (parse and run each time); the best
    parse and run times, and the first run's result (or its failure)."""
    first = worker.call("cpp", text, timeout=timeout)
    if first.status != "ok":
        return first
    for _ in range(max(1, repeats) - 1):
        r = worker.call("cpp", text, timeout=timeout)
        if r.status != "ok":
            break
        first.times = {k: min(first.times[k], r.times[k]) for k in first.times}
    return first


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", type=Path, default=DEFAULT_DIR, help="folder of test programs")
    ap.add_argument("--pattern", default="*", help="glob on file names (default: all)")
    ap.add_argument("--limit", type=int, default=None, help="run at most N programs")
    ap.add_argument("--all", action="store_true", help="include programs our interpreter fails")
    ap.add_argument("--no-cpp", action="store_true", help="skip the C++ interpreter")
    ap.add_argument("--no-xla", action="store_true", help="skip XLA CPU")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per peer run")
    ap.add_argument("--repeats", type=int, default=3,
                    help="runs per program and engine, best taken (default 3)")
    ap.add_argument("--json", type=Path, default=None, help="write per-program records here")
    ap.add_argument("--quiet", action="store_true", help="print the summary only")
    ap.add_argument("--ours-from", default=None, help="import stablehlo_ref from this checkout")
    args = ap.parse_args(argv)

    if not args.dir.is_dir():
        print(f"no test programs at {args.dir} (pass --dir)", file=sys.stderr)
        return 2
    files = select(args.dir, args.pattern, args.all, args.limit)
    use_peers = not (args.no_cpp and args.no_xla)
    if use_peers and not peers.jax_available():
        print("jax/jaxlib not importable: running our interpreter only "
              "(pip install -e .[interop] for the C++ and XLA columns)", file=sys.stderr)
        args.no_cpp = args.no_xla = True
        use_peers = False
    worker = peers.PeerWorker() if use_peers else None

    records = []
    if files:   # warm up imports and kernel registration outside the timed runs
        try:
            run_ours(peers.strip_checks(files[0].read_text())[0])
        except Exception:
            pass
    if not args.quiet:
        print(f"{'program':48s} {'ours':>9s} {'c++':>9s} {'c++/ours':>8s} {'xla comp':>9s} "
              f"{'xla run':>9s}  agree(c++, xla)")
    try:
        for path in files:
            rec = {"program": path.name}
            records.append(rec)
            try:
                text, labels = peers.strip_checks(path.read_text())
            except peers.NotRunnable as e:
                rec["skipped"] = str(e)
                continue
            try:
                times, ours = run_ours(text, args.repeats)
                rec["ours"] = times
            except Exception as e:  # reported per program
                rec["ours_error"] = f"{type(e).__name__}: {e}"[:300]
                ours = None
            if not args.no_cpp:
                r = run_cpp(worker, text, args.repeats, args.timeout)
                rec["cpp_status"] = r.status
                if r.status == "ok":
                    rec["cpp"] = r.times
                    if ours is not None:
                        rec["cpp_agree"] = peers.compare_lists(ours, r.outputs)
                else:
                    rec["cpp_error"] = r.message
            if not args.no_xla:
                r = worker.call("xla", text, timeout=args.timeout)
                rec["xla_status"] = r.status
                if r.status == "ok":
                    rec["xla"] = r.times
                    if ours is not None:
                        rec["xla_agree"] = peers.compare_lists(ours, r.outputs, ulps=64)
                else:
                    rec["xla_error"] = r.message
            if not args.quiet:
                o = rec.get("ours", {}).get("run")
                c = rec.get("cpp", {}).get("run")
                ratio = f"{c / o:.1f}x" if o and c else "-"
                agree = (rec.get("cpp_agree") or rec.get("cpp_status") or "-",
                         rec.get("xla_agree") or rec.get("xla_status") or "-")
                print(f"{path.name[:48]:48s} {peers.fmt_s(o):>9s} {peers.fmt_s(c):>9s} {ratio:>8s} "
                      f"{peers.fmt_s(rec.get('xla', {}).get('compile')):>9s} "
                      f"{peers.fmt_s(rec.get('xla', {}).get('run')):>9s}  {agree[0][:40]}, {agree[1][:40]}",
                      flush=True)
    finally:
        if worker is not None:
            worker.close()

    summary = summarize(records)
    print_summary(summary)
    if args.json:
        args.json.write_text(json.dumps({"summary": summary, "programs": records}, indent=1))
        print(f"wrote {args.json}")
    return 0


def summarize(records) -> dict:
    ran = [r for r in records if "ours" in r]
    s = {"programs": len(records), "skipped": sum("skipped" in r for r in records),
         "ours_ok": len(ran), "ours_errors": sum("ours_error" in r for r in records),
         "ours_run_s": sum(r["ours"]["run"] for r in ran),
         "ours_parse_s": sum(r["ours"]["parse"] for r in ran)}
    both = [r for r in ran if "cpp" in r]
    if any("cpp_status" in r for r in records):
        s["cpp_compared"] = len(both)
        s["cpp_failed"] = {st: sum(r.get("cpp_status") == st for r in records)
                           for st in ("error", "crash", "timeout")}
        s["cpp_agree"] = sum(not r["cpp_agree"].startswith("differ") for r in both)
        s["cpp_agree_kinds"] = {k: sum(r["cpp_agree"] == k for r in both)
                                for k in ("exact", "close", "near")}
        s["cpp_differ"] = [r["program"] for r in both if r["cpp_agree"].startswith("differ")]
        s["both_ours_run_s"] = sum(r["ours"]["run"] for r in both)
        s["both_cpp_run_s"] = sum(r["cpp"]["run"] for r in both)
        s["both_ours_total_s"] = sum(r["ours"]["run"] + r["ours"]["parse"] for r in both)
        s["both_cpp_total_s"] = sum(r["cpp"]["run"] + r["cpp"]["parse"] for r in both)
        if s["both_ours_run_s"]:
            s["cpp_over_ours_run"] = s["both_cpp_run_s"] / s["both_ours_run_s"]
            s["cpp_over_ours_total"] = s["both_cpp_total_s"] / s["both_ours_total_s"]
        ratios = sorted(r["cpp"]["run"] / r["ours"]["run"] for r in both if r["ours"]["run"] > 0)
        if ratios:
            s["cpp_over_ours_median"] = ratios[len(ratios) // 2]
    xb = [r for r in ran if "xla" in r]
    if any("xla_status" in r for r in records):
        s["xla_compared"] = len(xb)
        s["xla_agree"] = sum(not r["xla_agree"].startswith("differ") for r in xb)
        s["xla_agree_kinds"] = {k: sum(r["xla_agree"] == k for r in xb)
                                for k in ("exact", "close", "near")}
        s["xla_differ"] = [r["program"] for r in xb if r["xla_agree"].startswith("differ")]
        s["xla_failed"] = sum(r.get("xla_status") not in (None, "ok") for r in records)
        s["xla_compile_s"] = sum(r["xla"]["compile"] for r in xb)
        s["xla_run_s"] = sum(r["xla"]["run"] for r in xb)
        s["xla_ours_run_s"] = sum(r["ours"]["run"] for r in xb)
        if s["xla_run_s"]:
            s["ours_over_xla_run"] = s["xla_ours_run_s"] / s["xla_run_s"]
        if s["xla_compile_s"]:
            s["xla_compile_plus_run_over_ours"] = ((s["xla_compile_s"] + s["xla_run_s"])
                                                   / s["xla_ours_run_s"])
    return s


def print_summary(s: dict) -> None:
    f = peers.fmt_s
    print()
    print(f"programs: {s['programs']}  skipped: {s['skipped']}  ours ran: {s['ours_ok']}  "
          f"ours errors: {s['ours_errors']}")
    print(f"ours: run {f(s['ours_run_s'])}  parse {f(s['ours_parse_s'])}")
    if "cpp_compared" in s:
        print(f"C++ interpreter: compared {s['cpp_compared']}  agree {s['cpp_agree']}  "
              f"{s['cpp_agree_kinds']}  differ {len(s['cpp_differ'])}  failed {s['cpp_failed']}")
        if "cpp_over_ours_run" in s:
            print(f"  total run: ours {f(s['both_ours_run_s'])}  C++ {f(s['both_cpp_run_s'])}  "
                  f"=> C++/ours = {s['cpp_over_ours_run']:.2f}x  (issue 15's target: >= 30x)")
            print(f"  parse+run: ours {f(s['both_ours_total_s'])}  C++ {f(s['both_cpp_total_s'])}  "
                  f"=> {s['cpp_over_ours_total']:.2f}x;  per-program median C++/ours "
                  f"{s.get('cpp_over_ours_median', float('nan')):.2f}x (target >= 1.5x)")
        for p in s["cpp_differ"][:20]:
            print(f"  differs from C++: {p}")
    if "xla_compared" in s:
        print(f"XLA CPU: compared {s['xla_compared']}  agree {s['xla_agree']}  "
              f"{s['xla_agree_kinds']}  differ {len(s['xla_differ'])}  failed to compile/run {s['xla_failed']}")
        if "ours_over_xla_run" in s:
            print(f"  compile {f(s['xla_compile_s'])}  run {f(s['xla_run_s'])}  vs ours run "
                  f"{f(s['xla_ours_run_s'])}  => ours/XLA-run = {s['ours_over_xla_run']:.1f}x, "
                  f"(XLA compile+run)/ours = {s.get('xla_compile_plus_run_over_ours', 0):.2f}x")
        for p in s["xla_differ"][:20]:
            print(f"  differs from XLA: {p}")


if __name__ == "__main__":
    sys.exit(main())
