"""The `stablehlo-ref` command line.

    stablehlo-ref run FILE [--entry NAME] [--input A.npy ...] [--inputs ARGS.npz] [-o OUT.npz] [--trace]
    stablehlo-ref run --check FILE... [--json OUT.json]
    stablehlo-ref validate FILE... [--json] [--target X.Y.Z] [--profile P]
    stablehlo-ref print FILE [--generic] [--strip-debuginfo | --debuginfo]
    stablehlo-ref convert IN -o OUT [--target V] [--emit bytecode|text] [--strip-debuginfo] [--inline-resources]
    stablehlo-ref spec [OP]
    stablehlo-ref conformance --backend NAME [--backend NAME ...] [--corpus DIR ...] [--pattern GLOB] [--op NAME]
        [--json OUT] [--html OUT] [--junit OUT] [--profile OUT] [--scheduler ADDRESS] [--shard I/N]
        [--known-failures [NAME=]FILE] [--timeout S] [--strict] [--extra-ulps N]
    stablehlo-ref conformance --merge REPORT.json ... [--json OUT] [--html OUT] [--junit OUT] [--profile OUT]
    stablehlo-ref conformance --backend NAME --program FILE [--entry NAME] [--inputs ARGS.npz | --random-inputs SEED]
    stablehlo-ref conformance --list-backends
    stablehlo-ref conformance --export DIR [--corpus DIR ...] [--pattern GLOB] [--op NAME]
    (`conform` is short for `conformance`)

Every user error is one line on stderr; exit code 1 for an invalid program or a failed check,
2 for usage and I/O errors."""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile

from .errors import StableHLOError, UsageError


class _ArgParser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


def write_atomically(path: str, data: bytes) -> None:
    d = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=d)
    except OSError as e:
        raise UsageError(f"cannot write {path}: {e.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise UsageError(f"cannot write {path}: {e.strerror}") from None


def _read_bytes(path: str):
    """A file's bytes in memory (so pipes and process substitutions work like files)."""
    import io
    with open(path, "rb") as f:
        return io.BytesIO(f.read())


def _load_inputs(args, module, entry):
    import numpy as np
    arrays = []
    for p in args.input or []:
        try:
            arrays.append(np.load(_read_bytes(p), allow_pickle=False))
        except (OSError, ValueError, EOFError) as e:
            raise UsageError(f"cannot read input {p}: {e}") from None
    if args.inputs:
        try:
            with np.load(_read_bytes(args.inputs), allow_pickle=False) as z:
                keys = list(z.keys())
                def order(k):
                    tail = k.rsplit("_", 1)[-1]
                    return (0, int(tail)) if tail.isdigit() else (1, k)
                for k in sorted(keys, key=order):
                    arrays.append(z[k])
        except (OSError, ValueError, EOFError) as e:
            raise UsageError(f"cannot read inputs {args.inputs}: {e}") from None
    return arrays


def _format_result(i, a) -> str:
    import numpy as np
    if isinstance(a, np.ndarray):
        body = np.array2string(np.asarray(a), threshold=200, edgeitems=4, max_line_width=100)
        return f"result #{i}: shape={tuple(a.shape)} dtype={a.dtype}\n{body}"
    return f"result #{i}: {a!r}"


def cmd_run(args) -> int:
    import numpy as np
    from . import load
    if args.check:
        return cmd_check(args)
    if len(args.files) != 1:
        raise UsageError("run takes exactly one FILE (or use --check for several)")
    module = load(args.files[0])
    if not args.no_verify:
        from .verifier import verify
        verify(module)
    from .interpreter.evaluator import Interpreter, coerce_argument
    from .errors import InterpreterError
    func = module.function(args.entry)
    ft = func.attributes["function_type"].type
    arrays = _load_inputs(args, module, args.entry)
    if len(arrays) != len(ft.inputs):
        raise UsageError(f"@{args.entry} takes {len(ft.inputs)} argument(s) ({', '.join(str(t) for t in ft.inputs)}); {len(arrays)} given")
    try:
        vals = [coerce_argument(a, t, i) for i, (a, t) in enumerate(zip(arrays, ft.inputs))]
    except InterpreterError as e:
        raise UsageError(str(e)) from None
    interp = Interpreter(module, trace=sys.stderr if args.trace else None)
    results = interp.call(args.entry, vals)
    for i, r in enumerate(results):
        print(_format_result(i, r))
    if args.output:
        import io
        buf = io.BytesIO()
        np.savez(buf, **{f"result_{i}": np.asarray(r) for i, r in enumerate(results)})
        write_atomically(args.output, buf.getvalue())
    return 0


def cmd_check(args) -> int:
    from .checkrun import run_file
    all_results = []
    for path in args.files:
        try:
            res = run_file(path)
        except OSError as e:
            raise UsageError(f"cannot read {path}: {e.strerror}") from None
        except UnicodeDecodeError:
            raise UsageError(f"{path}: not a UTF-8 text file") from None
        all_results.extend(res)
        for r in res:
            if r.status != "pass":
                fn = f" @{r.function}" if r.function else ""
                print(f"{r.status.upper()}: {r.file} chunk {r.chunk}{fn}: {r.reason.splitlines()[0] if r.reason else ''}")
    passed = sum(1 for r in all_results if r.status == "pass")
    failed = len(all_results) - passed
    print(f"{passed} passed, {failed} failed")
    if args.json:
        data = json.dumps({"cases": [r.to_json() for r in all_results]}, indent=1).encode()
        write_atomically(args.json, data)
    return 0 if failed == 0 else 1


def cmd_validate(args) -> int:
    """Parse and verify each file; report every offending op (one line each, or `--json`), the
    module's minimum StableHLO version, what `--target V` cannot carry, and an artifact that
    claims a version newer than the spec knows. Exit 1 if any file has a problem."""
    from . import load_bytes, spec
    from .serialization import artifact_version
    from .verifier import collect
    from .verifier.versions import version_report
    if args.target is not None:
        try:
            spec.parse_version(args.target)
        except StableHLOError as e:
            raise UsageError(f"--target: {e}") from None
    status, reports = 0, []
    for path in args.files:
        rep = {"file": path, "ok": False, "errors": [], "minimum_version": None, "target": args.target,
               "target_problems": []}
        reports.append(rep)
        try:
            data = _read_bytes(path).getvalue()
        except OSError as e:
            raise UsageError(f"cannot read {path}: {e.strerror}") from None
        try:
            if data[:4] == b"ML\xefR":
                claimed = artifact_version(data)
                rep["artifact_version"] = claimed
                if spec.parse_version(claimed) > spec.parse_version(spec.current_version()):
                    rep["errors"].append({"message": f"{path}: the artifact claims StableHLO {claimed}, newer than "
                                                     f"the newest version this tool knows ({spec.current_version()})"})
            module = load_bytes(data, path)
        except StableHLOError as e:
            rep["errors"].append({"message": str(e)})
            status = 1
            continue
        for e in collect(module):
            rep["errors"].append({"message": str(e), "op": e.op.name, "constraint": e.constraint or None})
        if not rep["errors"]:
            least, rep["target_problems"] = version_report(module, args.target)
            rep["minimum_version"] = least
        rep["ok"] = not rep["errors"] and not rep["target_problems"]
        status = status or (0 if rep["ok"] else 1)
        if args.profile and rep["ok"]:        # will it run correctly on the profile's backend?
            from .conformance.profile import model_report
            rep["profile"] = model_report(args.profile, module, path)
            status = status or (0 if rep["profile"]["ok"] else 1)
    if args.json:
        print(json.dumps({"files": reports}, indent=1))
        return status
    for rep in reports:
        for e in rep["errors"]:
            print(f"error: {e['message']}", file=sys.stderr)
        for m in rep["target_problems"]:
            print(f"error: {m} (target {rep['target']})", file=sys.stderr)
        if not rep["errors"]:
            least = rep["minimum_version"] or "none (no portable form)"
            word = "ok" if rep["ok"] else "invalid"
            print(f"{word}: {rep['file']} (minimum StableHLO version {least})")
            for line in rep.get("profile", {}).get("lines", []):
                print(line)
    return status


def cmd_print(args) -> int:
    from . import print_module
    module = _read_program(args.file)
    if args.debuginfo and args.strip_debuginfo:
        raise UsageError("--debuginfo and --strip-debuginfo exclude each other")
    sys.stdout.write(print_module(module, generic=args.generic, strip_debuginfo=args.strip_debuginfo,
                                  debuginfo=args.debuginfo))
    return 0


def _read_program(path: str):
    """A Module from a text file or a portable artifact; `-` reads stdin (located as `-`,
    the buffer name upstream tools give stdin)."""
    from . import load, load_bytes
    if path != "-":
        return load(path)
    return load_bytes(sys.stdin.buffer.read(), "<stdin>", "-")


def cmd_convert(args) -> int:
    """Text or artifact in; a portable artifact at `--target` (or, with --emit text, the
    StableHLO text that artifact holds) out. `--target` takes X.Y.Z, `current` or `minimum`."""
    from . import print_module, spec
    from .serialization import deserialize, serialize
    target = {"current": spec.current_version(), "minimum": spec.minimum_version(),
              None: "1.0.0"}.get(args.target, args.target)
    module = _read_program(args.input)
    if args.inline_resources:
        from .ir.resources import inline_resources
        inline_resources(module)
    if args.emit == "bytecode":
        data = serialize(module, target, strip_debuginfo=args.strip_debuginfo)
    else:
        if args.target is not None:      # what an artifact at that target holds (refused if it cannot)
            module = deserialize(serialize(module, target, strip_debuginfo=args.strip_debuginfo))
        data = print_module(module, strip_debuginfo=args.strip_debuginfo).encode()
    if args.output == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    else:
        write_atomically(args.output, data)
    return 0


def cmd_spec(args) -> int:
    from . import spec
    if args.op:
        name = args.op if "." in args.op else f"stablehlo.{args.op}"
        try:
            spec.op(name)
        except spec.UnknownOpError as e:
            raise UsageError(str(e)) from None
        print(spec.format_op(name))
    else:
        print(spec.format_op_table())
    return 0


def cmd_conform(args) -> int:
    """Run the conformance suite on one or more backends (a campaign, on Dask with
    --scheduler); 0 when no case fails or errors (and, with --known-failures, none fails
    outside the list and no listed case passes). Reports: conformance/report.py."""
    from .conformance import get_backend, load_cases, load_known_failures
    from .conformance.backends import list_backends
    from .conformance.campaign import merge_reports, parse_shard, reports_from_json, run_campaign, shard, write_outputs
    from .conformance.report import Progress, format_summary
    if args.list_backends:
        print("\n".join(list_backends()))
        return 0
    configs = list(dict.fromkeys(args.backend or []))
    args.backend = configs[0] if configs else None
    if args.merge:
        if configs or args.corpus or args.export or args.program:
            raise UsageError("--merge goes with neither --backend, --corpus, --export nor --program")
        runs = []
        for path in args.merge:
            try:
                with open(path, encoding="utf-8") as f:
                    doc = json.load(f)
            except OSError as e:
                raise UsageError(f"cannot read {path}: {e.strerror}") from None
            except ValueError as e:
                raise UsageError(f"{path}: not JSON: {e}") from None
            try:
                runs.extend(reports_from_json(doc))
            except UsageError as e:
                raise UsageError(f"{path}: {e}") from None
        reports = merge_reports(runs)
        for rep in reports:
            print(format_summary(rep))
        write_outputs(reports, args.json, args.html, args.junit, args.profile)
        return 0 if all(r.ok for r in reports) else 1
    if not configs and not args.export:
        raise UsageError("conform needs --backend NAME (or --list-backends, or --export DIR)")
    for name in configs:
        get_backend(name).close()      # an unknown name is a usage error before any work
    if args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    if args.program:
        if len(configs) > 1 or args.scheduler or args.shard:
            raise UsageError("--program runs on one --backend, without --scheduler or --shard")
        return _conform_program(args)
    for flag in ("entry", "inputs", "random_inputs", "rtol", "atol", "max_ulp"):
        if getattr(args, flag) is not None:
            raise UsageError(f"--{flag.replace('_', '-')} goes with --program")
    corpora = args.corpus
    if not corpora:
        root = os.environ.get("STABLEHLO_TESTS")
        if not root:
            raise UsageError("conform needs --corpus DIR (or STABLEHLO_TESTS set to a folder holding interpret/, math/, testdata/)")
        corpora = [os.path.join(root, d) for d in ("interpret", "math", "testdata") if os.path.isdir(os.path.join(root, d))]
        if not corpora:
            raise UsageError(f"STABLEHLO_TESTS={root} holds none of interpret/, math/, testdata/")
    for d in corpora:
        if not os.path.exists(d):
            raise UsageError(f"corpus {d} does not exist")
    if args.timeout is not None and args.timeout <= 0:
        raise UsageError("--timeout must be positive")
    part = parse_shard(args.shard) if args.shard else None
    known_map = {}
    for entry in args.known_failures or []:
        name, eq, path = entry.partition("=")
        if eq and name in configs:
            known_map[name] = {**known_map.get(name, {}), **load_known_failures(path)}
        else:
            kf = load_known_failures(entry)
            for c in configs:
                known_map[c] = {**known_map.get(c, {}), **kf}
    skipped: list = []
    cases = load_cases(corpora, pattern=args.pattern, op=args.op, errors=skipped)
    if args.op:            # what a program that could not be read uses is unknown
        skipped = []
    elif args.pattern:
        import fnmatch
        skipped = [s for s in skipped if fnmatch.fnmatchcase(s[0], args.pattern)]
    if part:
        cases, skipped = shard(cases, *part), shard(skipped, *part)
    if not cases:
        raise UsageError("no cases selected")
    if args.export:
        from .conformance.cases import export_cases
        try:
            export_cases(cases, args.export)
        except OSError as e:
            raise UsageError(f"cannot write cases to {args.export}: {e.strerror}") from None
        print(f"wrote {len(cases)} case(s) to {args.export} ({len(skipped)} function(s) skipped)")
        return 0
    with Progress(len(cases) * len(configs), desc="conformance") as bar:
        def progress(config, o):
            bar.update(o)
            known = known_map.get(config) or {}
            if args.verbose or (o.status != "pass" and o.id not in known):
                who = f"[{config}] " if len(configs) > 1 else ""
                bar.write(f"{o.status.upper()}: {who}{o.id}" + (f": {o.message}" if o.message else ""))
        reports = run_campaign(configs, cases, scheduler=args.scheduler, timeout=args.timeout,
                               extra_ulps=args.extra_ulps, known={c: known_map.get(c) for c in configs},
                               strict=args.strict, skipped=skipped,
                               complete=not (args.pattern or args.op or part), progress=progress, jobs=args.jobs)
    for rep in reports:
        # the per-case lines were printed as the cases ran
        print(format_summary(rep, case_lines=False))
    write_outputs(reports, args.json, args.html, args.junit, args.profile)
    return 0 if all(r.ok for r in reports) else 1


def _conform_program(args) -> int:
    """`conform --program FILE`: one user program on the backend and on the reference
    interpreter, every output compared (see conformance/program.py)."""
    from .conformance import get_backend, program_case, run_suite
    if args.export or args.corpus or args.pattern or args.op or args.known_failures:
        raise UsageError("--program goes with neither --corpus, --pattern, --op, --known-failures nor --export")
    if not args.backend:
        raise UsageError("--program needs --backend NAME")
    if args.inputs and args.random_inputs is not None:
        raise UsageError("give --inputs or --random-inputs, not both")
    if args.timeout is not None and args.timeout <= 0:
        raise UsageError("--timeout must be positive")
    entry = args.entry or "main"
    inputs = _load_inputs(argparse.Namespace(input=None, inputs=args.inputs), None, entry) if args.inputs else None
    import pathlib
    case = program_case(pathlib.Path(args.program), entry, inputs=inputs, seed=args.random_inputs,
                        case_id=f"{os.path.basename(args.program)}@{entry}",
                        rtol=args.rtol, atol=args.atol, max_ulp=args.max_ulp)
    backend = get_backend(args.backend, extra_ulps=args.extra_ulps)
    try:
        ok, why = backend.available()
        if not ok:
            raise UsageError(f"backend {args.backend} is unavailable: {why}")
        report = run_suite(backend, [case], timeout=args.timeout)
    finally:
        backend.close()
    o = report.outcomes[0]
    print(f"{o.status.upper()}: {o.id}" + (f": {o.message}" if o.message else ""))
    if args.verbose or o.status == "pass":
        for i, (et, r) in enumerate(zip(case.element_types, case.rules)):
            print(f"  output {i}: {et}, {r.describe()}")
    c = report.counts()
    print(f"{report.backend}: {c['pass']} passed, {c['fail']} failed, {c['error']} errors, "
          f"{c['unsupported']} unsupported ({report.seconds:.1f} s)")
    if args.json:
        write_atomically(args.json, json.dumps(report.to_json(), indent=1).encode())
    return 0 if o.status == "pass" or (o.status == "unsupported" and not args.strict) else 1


def build_parser() -> argparse.ArgumentParser:
    p = _ArgParser(prog="stablehlo-ref", description="Pure-Python StableHLO: parse, print, run and check programs.")
    sub = p.add_subparsers(dest="command", parser_class=_ArgParser)
    r = sub.add_parser("run", help="run a function (or, with --check, upstream-style test files)")
    r.add_argument("files", nargs="+", metavar="FILE")
    r.add_argument("--entry", default="main")
    r.add_argument("--input", action="append", metavar="A.npy")
    r.add_argument("--inputs", metavar="ARGS.npz")
    r.add_argument("-o", "--output", metavar="OUT.npz")
    r.add_argument("--check", action="store_true")
    r.add_argument("--json", metavar="OUT.json")
    r.add_argument("--trace", action="store_true", help="print each op's location, name and result summary to stderr")
    r.add_argument("--no-verify", action="store_true", help="interpret without verifying the module first")
    r.set_defaults(fn=cmd_run)
    v = sub.add_parser("validate", help="parse and verify files; print ok or one error per problem")
    v.add_argument("files", nargs="+", metavar="FILE")
    v.add_argument("--json", action="store_true", help="print one JSON report on stdout")
    v.add_argument("--target", metavar="X.Y.Z", help="also list everything StableHLO X.Y.Z cannot carry")
    v.add_argument("--profile", metavar="P", help="also say whether each valid file runs correctly on the backend whose "
                   "capability profile P is (written by `conformance --profile`); 1 when it does not")
    v.set_defaults(fn=cmd_validate)
    pr = sub.add_parser("print", help="print a module (pretty or --generic)")
    pr.add_argument("file", metavar="FILE")
    pr.add_argument("--generic", action="store_true")
    pr.add_argument("--strip-debuginfo", action="store_true", help="print no locations")
    pr.add_argument("--debuginfo", action="store_true",
                    help="print every location as MLIR's -mlir-print-debuginfo does (#loc aliases)")
    pr.set_defaults(fn=cmd_print)
    c = sub.add_parser("convert", help="write a program (text or artifact) as a portable artifact at a target version, or as text")
    c.add_argument("input", metavar="IN", help="a .mlir text file or a portable artifact (- for stdin)")
    c.add_argument("-o", "--output", required=True, metavar="OUT", help="output path (- for stdout); written atomically")
    c.add_argument("--target", default=None, metavar="V",
                   help="StableHLO version X.Y.Z, 'current' or 'minimum' (default 1.0.0 for bytecode)")
    c.add_argument("--emit", choices=("bytecode", "text"), default="bytecode")
    c.add_argument("--strip-debuginfo", action="store_true")
    c.add_argument("--inline-resources", action="store_true",
                   help="write dense_resource<...> constants as dense<...> (VHLO cannot hold resources)")
    c.set_defaults(fn=cmd_convert)
    s = sub.add_parser("spec", help="list ops, or show one op's spec entry")
    s.add_argument("op", nargs="?")
    s.set_defaults(fn=cmd_spec)
    cf = sub.add_parser("conformance", aliases=["conform"],
                        help="run the conformance suite on a backend (reference, xla, upstream, iree)")
    cf.add_argument("--backend", metavar="NAME", action="append",
                    help="reference | xla | xla:<platform> (xla:cuda) | upstream | iree | iree:<driver> (iree:cuda) | "
                         "a plug-in's entry-point name | module:Class; repeat it for a campaign over several backends")
    cf.add_argument("--corpus", action="append", metavar="DIR",
                    help="folder (or file) of upstream-style checked test programs; repeatable "
                         "(default: interpret/, math/, testdata/ under $STABLEHLO_TESTS)")
    cf.add_argument("--pattern", metavar="GLOB", help="only case ids matching GLOB (e.g. 'testdata/add_*')")
    cf.add_argument("--op", metavar="NAME", help="only cases whose program uses op NAME ('add' = stablehlo.add)")
    cf.add_argument("--json", metavar="OUT", help="write the report as JSON (atomically; schema: conformance/report.schema.json)")
    cf.add_argument("--html", metavar="OUT", help="write one self-contained HTML file: an op x element-type matrix per backend")
    cf.add_argument("--junit", metavar="OUT", help="write JUnit XML (one testcase per case, the op as classname)")
    cf.add_argument("--profile", metavar="OUT",
                    help="write the backend's capability profile (op x type x variant passed), for `validate --profile`")
    cf.add_argument("--scheduler", metavar="ADDRESS",
                    help="run the campaign on a Dask distributed cluster (tcp://host:8786); needs dask[distributed]")
    cf.add_argument("--shard", metavar="I/N", help="run only the I-th of N disjoint parts of the cases (CI matrices; 1-based)")
    cf.add_argument("--merge", metavar="REPORT.json", action="append",
                    help="read reports written with --json (shards, campaigns), merge them and write --json/--html/--junit/--profile")
    cf.add_argument("--known-failures", metavar="[NAME=]FILE", action="append",
                    help="case-id<TAB>reason lines: listed failures are allowed; a listed case that passes fails the run "
                         "(NAME=FILE: for backend NAME only; repeatable)")
    cf.add_argument("--timeout", type=float, default=60.0, metavar="S", help="per-case timeout in seconds (default 60)")
    cf.add_argument("--strict", action="store_true", help="count unsupported cases as failures")
    cf.add_argument("--extra-ulps", type=int, default=0, metavar="N", help="loosen every ULP bound by N (hardware math libraries)")
    cf.add_argument("--list-backends", action="store_true", help="list backends and whether each is available")
    cf.add_argument("--export", metavar="DIR",
                    help="write the selected cases as files (program .mlir, arrays .npz, cases.json) instead of running them")
    cf.add_argument("-v", "--verbose", action="store_true", help="print every case, passing ones too")
    cf.add_argument("-j", "--jobs", type=int, default=1, metavar="N",
                    help="run cases concurrently on N instances of the backend (results stay in case order)")
    cf.add_argument("--program", metavar="FILE",
                    help="run one user program (text, artifact or jax.export payload) on the backend and "
                         "compare every output with the reference interpreter's")
    cf.add_argument("--entry", metavar="NAME", help="with --program: the function to run (default main)")
    cf.add_argument("--inputs", metavar="ARGS.npz", help="with --program: the arguments (arg_0, arg_1, ... in order)")
    cf.add_argument("--random-inputs", type=int, metavar="SEED",
                    help="with --program: random arguments from the entry's signature, deterministic per SEED")
    cf.add_argument("--rtol", type=float, metavar="R", help="with --program: relative tolerance for float outputs")
    cf.add_argument("--atol", type=float, metavar="A", help="with --program: absolute tolerance for float outputs")
    cf.add_argument("--max-ulp", type=int, metavar="N", help="with --program: ULP bound for float outputs")
    cf.set_defaults(fn=cmd_conform)
    return p


def main(argv=None) -> int:
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if not getattr(args, "fn", None):
            parser.print_help()
            return 2
        return args.fn(args)
    except StableHLOError as e:
        print(f"error: {e}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except RecursionError:
        print("error: program nesting too deep", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
