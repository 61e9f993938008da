"""The `stablehlo-ref` command line (the reference of every command and flag is `--help`, and
README's command reference, which a test keeps equal to it).

Every user error is reported as MLIR tools report it (`file:line:col: error: message`, the
source line and a caret; `error: message` without a location) and ends the command with exit
code 1 for an invalid program or a failed check, 2 for usage and I/O errors. No traceback: a
bug of this project is one line too (`internal error: ...`, exit code 70).
Files are read and written by `fileio` (stdin/stdout as `-`, atomic replacement, symlinks
written through, FIFOs without hangs) and arrays by `npio`/`runinputs` (headers checked first)."""
from __future__ import annotations

import argparse
import json
import os
import sys

from .errors import StableHLOError, UsageError
from .fileio import install_signal_cleanup, read_input, write_output

# the text of every program read, by the name its locations use, for source lines in errors
_SOURCES: dict = {}


class _ArgParser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


def write_atomically(path: str, data: bytes) -> None:
    """Kept for callers of the old name: `fileio.write_output`."""
    write_output(path, data)


# ------------------------------------------------------------------ reading programs
def _read_program(path: str, *, keep_bytes: bool = False):
    """A Module from text, an artifact or a jax.export payload; `-` reads stdin (text located
    as `-`, the buffer name upstream tools give stdin). With keep_bytes: (module, bytes)."""
    data = _read_program_bytes(path)
    m = _load_program_bytes(data, path)
    return (m, data) if keep_bytes else m


def _read_program_bytes(path: str) -> bytes:
    """A program file's bytes (`-`: stdin); its text is kept for source lines in diagnostics."""
    data = read_input(path, "program")
    try:
        _SOURCES[path] = data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    return data


def _load_program_bytes(data: bytes, path: str, limits=None):
    from . import load_bytes
    return load_bytes(data, "<stdin>" if path == "-" else path, path,
                      limits=limits if limits is not None else _PROGRAM_LIMITS)


def _check_stdin_once(paths) -> None:
    if sum(1 for p in paths if p == "-") > 1:
        raise UsageError("stdin (-) can be read only once")


def _entry_function(module, entry: str):
    fns = module.functions
    if entry not in fns:
        have = ", ".join("@" + n for n in fns) or "none"
        raise UsageError(f"--entry {entry}: no function @{entry} in the module (have: {have})")
    f = fns[entry]
    if not f.regions or not f.regions[0].blocks:
        raise UsageError(f"--entry {entry}: @{entry} is a declaration without a body")
    return f


# ------------------------------------------------------------------ limits (one place)
def add_limit_flags(p) -> None:
    """The resource-limit flags (stablehlo_ref.limits) of commands that read and run programs."""
    from .limits import DEFAULT
    p.add_argument("--max-tensor-elements", type=int, metavar="N",
                   help=f"refuse a tensor of more than N elements (default {DEFAULT.max_tensor_elements})")
    p.add_argument("--max-tensor-bytes", type=int, metavar="N",
                   help=f"refuse a tensor of more than N bytes (default {DEFAULT.max_tensor_bytes})")
    p.add_argument("--max-live-bytes", type=int, metavar="N",
                   help=f"stop a run whose live values exceed N bytes (default {DEFAULT.max_live_bytes})")
    p.add_argument("--max-steps", type=int, metavar="N",
                   help="stop a run after N loop iterations in all (default unbounded)")
    p.add_argument("--timeout", type=float, metavar="S", help="stop a run after S seconds (default unbounded)")
    p.add_argument("--max-nesting", type=int, metavar="N",
                   help=f"refuse programs nested deeper than N regions or brackets (default {DEFAULT.max_nesting})")


def add_nesting_flag(p) -> None:
    """--max-nesting: how deep regions, types, attributes and brackets of a program may nest."""
    from .limits import DEFAULT
    p.add_argument("--max-nesting", type=int, metavar="N",
                   help=f"refuse a program nested more than N deep (default {DEFAULT.max_nesting})")


# the limits the program reader applies, from the flags of the command being run
_PROGRAM_LIMITS = None


def limits_from_args(args):
    """A stablehlo_ref.limits.Limits from the limit flags (the defaults where not given)."""
    from .limits import DEFAULT, FLAGS
    kw = {}
    for name in FLAGS:
        v = getattr(args, name, None)
        if v is not None:
            if v <= 0:
                raise UsageError(f"{FLAGS[name]} must be positive")
            kw[name] = v
    return DEFAULT.replace(**kw) if kw else DEFAULT


# ------------------------------------------------------------------ run
def _format_result(i, a) -> str:
    import numpy as np
    if isinstance(a, np.ndarray):
        body = np.array2string(np.asarray(a), threshold=200, edgeitems=4, max_line_width=100)
        return f"result #{i}: shape={tuple(a.shape)} dtype={a.dtype}\n{body}"
    return f"result #{i}: {a!r}"


def _run_inputs(args, func, entry):
    from .runinputs import load_arguments
    files = []
    paths = list(args.input or []) + ([args.inputs] if args.inputs else [])
    _check_stdin_once(paths + list(args.files))
    for p in args.input or []:
        files.append((read_input(p, "input array"), "stdin" if p == "-" else p, False))
    if args.inputs:
        files.append((read_input(args.inputs, "input archive"), "stdin" if args.inputs == "-" else args.inputs, True))
    return load_arguments(func, entry, files, cast=args.cast, limits=limits_from_args(args))


def _load_inputs(args, module, entry):
    """Arrays from --input files and an --inputs archive without a function to bind them to
    (`conform --program`): .npz arrays in arg_0, arg_1, ... order, each read after its header
    is checked (no pickles, no structured dtypes, within the size limits)."""
    from . import limits as _limits
    from .npio import open_arrays
    entries = []
    for p in args.input or []:
        es = open_arrays(read_input(p, "input array"), p)
        if es and es[0].key is not None:
            raise UsageError(f"{p}: is an .npz archive, not a .npy array")
        entries.extend(es)
    if args.inputs:
        es = open_arrays(read_input(args.inputs, "input archive"), args.inputs)
        if es and es[0].key is None:
            raise UsageError(f"{args.inputs}: is a .npy array, not an .npz archive")

        def order(e):
            tail = e.key.rsplit("_", 1)[-1]
            return (0, int(tail)) if tail.isdigit() else (1, e.key)
        entries.extend(sorted(es, key=order))
    lim = limits_from_args(args)
    for e in entries:
        _limits.check_tensor(e.shape, e.dtype.itemsize * 8, e.where, limits=lim)
    return [e.load() for e in entries]


def _results_writer(path: str, results):
    """What `-o` writes: one result as .npy when PATH ends in .npy, else an .npz of result_N."""
    import numpy as np
    arrays = [np.asarray(r) for r in results]
    if any(a.dtype.hasobject for a in arrays):
        raise UsageError("-o: a result is not an array (token or tuple); it cannot be saved")
    if path.endswith(".npy"):
        if len(arrays) != 1:
            raise UsageError(f"-o {path}: a .npy file holds one array; the function returns {len(arrays)} "
                             "(write an .npz instead)")
        return lambda f: np.save(f, arrays[0], allow_pickle=False)
    return lambda f: np.savez(f, **{f"result_{i}": a for i, a in enumerate(arrays)})


def cmd_run(args) -> int:
    if args.check:
        for flag in ("input", "inputs", "output", "trace", "probe", "trace_op", "cast"):
            if getattr(args, flag):
                raise UsageError(f"--{flag.replace('_', '-')} does not go with --check")
        return cmd_check(args)
    if args.json:
        raise UsageError("--json goes with --check")
    if len(args.files) != 1:
        raise UsageError("run takes exactly one FILE (or use --check for several)")
    if (args.trace_op or args.trace_first is not None) and not args.trace:
        raise UsageError("--trace-op and --trace-first go with --trace")
    if args.trace_first is not None and args.trace_first < 1:
        raise UsageError("--trace-first must be at least 1")
    if args.output and args.output != "-":
        _check_output_dir(args.output)      # an unwritable -o fails before the run, not after
    limits = limits_from_args(args)
    module = _load_program_bytes(_read_program_bytes(args.files[0]), args.files[0], limits)
    func = _entry_function(module, args.entry)
    if not args.no_verify:
        from .verifier import verify
        verify(module)
    vals = _run_inputs(args, func, args.entry)
    from .runtrace import run_with_hooks
    results = run_with_hooks(module, args.entry, vals, args, limits)
    if args.output:
        write = _results_writer(args.output, results)
    if args.output != "-":                  # `-o -`: stdout carries the arrays only
        for i, r in enumerate(results):
            print(_format_result(i, r))
        sys.stdout.flush()
    if args.output:
        write_output(args.output, write)
    return 0


def _check_output_dir(path: str) -> None:
    d = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(d):
        raise UsageError(f"cannot write {path}: no directory {d}")
    if os.path.isdir(path):
        raise UsageError(f"cannot write {path}: is a directory")


def cmd_check(args) -> int:
    from .checkrun import read_source, run_source
    limits = limits_from_args(args)
    _check_stdin_once(args.files)
    if args.json and args.json != "-":
        _check_output_dir(args.json)
    all_results = []
    for path in args.files:
        source = read_source(path)
        if not source:
            raise UsageError(f"{'stdin' if path == '-' else path}: test file is empty")
        name = path
        if isinstance(source, str):
            _SOURCES[name] = source
        res = run_source(source, name, limits)
        if not res:
            # nothing ran: a file whose functions all take arguments (or are private) would
            # otherwise "pass" with 0 cases, a check that cannot fail
            from .checkrun import NO_CASES, CaseResult
            res = [CaseResult(name, 0, "", "error", NO_CASES, 0.0)]
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
        write_output(args.json, data)
    return 0 if failed == 0 else 1


# ------------------------------------------------------------------ validate, print, convert
def cmd_validate(args) -> int:
    """Parse and verify each file; report every offending op (an MLIR-style diagnostic each, or
    `--json`), the module's minimum StableHLO version, what `--target V` cannot carry, and an
    artifact that claims a version newer than the spec knows. Exit 1 if any file has a problem."""
    import re
    from . import spec
    from .diagnostics import format_diagnostic, format_error
    from .serialization import artifact_version
    from .verifier import collect
    from .verifier.versions import version_report
    if args.target is not None:
        try:
            spec.parse_version(args.target)
        except StableHLOError as e:
            raise UsageError(f"--target: {e}") from None
    _check_stdin_once(args.files)
    status, reports, texts, profiled = 0, [], [], []
    for path in args.files:
        rep = {"file": path, "ok": False, "errors": [], "minimum_version": None, "target": args.target,
               "target_problems": []}
        reports.append(rep)
        diags = []
        texts.append(diags)
        data = _read_program_bytes(path)
        try:
            if data[:4] == b"ML\xefR":
                claimed = artifact_version(data)
                rep["artifact_version"] = claimed
                if spec.parse_version(claimed) > spec.parse_version(spec.current_version()):
                    msg = (f"{path}: the artifact claims StableHLO {claimed}, newer than "
                           f"the newest version this tool knows ({spec.current_version()})")
                    rep["errors"].append({"message": msg})
                    diags.append(format_diagnostic(msg))
            module = _load_program_bytes(data, path)
        except StableHLOError as e:
            rep["errors"].append({"message": str(e)})
            diags.append(format_error(e, sources=_SOURCES))
            status = 1
            continue
        for e in collect(module):
            rep["errors"].append({"message": str(e), "op": e.op.name, "constraint": e.constraint or None})
            diags.append(format_error(e, sources=_SOURCES))
        if not rep["errors"]:
            least, rep["target_problems"] = version_report(module, args.target)
            rep["minimum_version"] = least
            for m in rep["target_problems"]:
                at = re.match(r"^(.*?:\d+:\d+): (.*)$", m, re.S)
                loc, msg = (at.group(1), at.group(2)) if at else (None, m)
                diags.append(format_diagnostic(f"{msg} (target {rep['target']})", loc, sources=_SOURCES))
        rep["ok"] = not rep["errors"] and not rep["target_problems"]
        status = status or (0 if rep["ok"] else 1)
        if args.profile and not rep["errors"]:
            profiled.append((module, path))
    if args.json:
        print(json.dumps({"files": reports}, indent=1))
        return status
    for rep, diags in zip(reports, texts):
        for dg in diags:
            print(dg, file=sys.stderr)
        if not rep["errors"]:
            least = rep["minimum_version"] or "none (no portable form)"
            word = "ok" if rep["ok"] else "invalid"
            print(f"{word}: {rep['file']} (minimum StableHLO version {least})")
    if profiled:
        from .conformance.profile import report_model
        for module, path in profiled:
            status = max(status, report_model(args.profile, module, path))
    return status


def _elide_constants(module, n: int) -> int:
    """Replace every dense constant of more than `n` elements by `dense_resource<__elided__>`
    (MLIR's --mlir-elide-elementsattrs-if-larger); returns how many."""
    from .ir.attributes import DenseElementsAttr, DenseResourceAttr
    count = 0
    for op in module.walk():
        for k, v in list(op.attributes.items()):
            if isinstance(v, DenseElementsAttr) and v.array.size > n:
                op.attributes[k] = DenseResourceAttr(v.type, "__elided__")
                count += 1
    return count


def cmd_print(args) -> int:
    from . import print_module
    if args.debuginfo and args.strip_debuginfo:
        raise UsageError("--debuginfo and --strip-debuginfo exclude each other")
    if args.elide_constants is not None and args.elide_constants < 0:
        raise UsageError("--elide-constants must be at least 0")
    if args.emit == "bytecode" and (args.generic or args.elide_constants is not None):
        raise UsageError("--generic and --elide-constants go with --emit text")
    if args.emit == "bytecode" and args.output is None and sys.stdout.isatty():
        raise UsageError("--emit bytecode writes binary data: give -o FILE (or redirect stdout)")
    if args.output and args.output != "-":
        _check_output_dir(args.output)
    module = _read_program(args.file)
    if args.emit == "bytecode":
        from . import serialize, spec
        data = serialize(module, spec.current_version(), strip_debuginfo=not args.debuginfo)
    else:
        if args.elide_constants is not None:
            _elide_constants(module, args.elide_constants)
        data = print_module(module, generic=args.generic, strip_debuginfo=not args.debuginfo,
                            debuginfo=args.debuginfo).encode()
    write_output(args.output or "-", data)
    return 0


def _target_version(value):
    """--target: X.Y.Z within the versions this project reads and writes, current or minimum."""
    from . import spec
    if value is None:
        return None
    if value in ("current", "minimum"):
        return spec.current_version() if value == "current" else spec.minimum_version()
    lo, hi = spec.minimum_version(), spec.current_version()
    try:
        v = spec.parse_version(value)
    except Exception:
        raise UsageError(f"--target {value}: expected X.Y.Z, current or minimum") from None
    if v < spec.parse_version(lo) or v > spec.parse_version(hi):
        raise UsageError(f"--target {value}: outside the supported versions {lo} .. {hi}")
    return value


def cmd_convert(args) -> int:
    """Text or artifact in; a portable artifact at `--target` (or, with --emit text, the
    StableHLO text that artifact holds) out. `--target` takes X.Y.Z, `current` or `minimum`;
    without it (or with `minimum`), the oldest version that can carry the module, printed on
    stderr. CHLO ops, which no version can carry, are legalized to StableHLO first (a note on
    stderr says which; --no-legalize-chlo keeps them)."""
    from . import print_module, spec
    from .serialization import deserialize, serialize
    given = None if args.target == "minimum" else _target_version(args.target)
    if args.output != "-":
        _check_output_dir(args.output)
    module = _read_program(args.input)
    if not args.no_verify:              # as MLIR's translate verifies what it parses: nothing
        from .verifier import verify    # invalid is written with exit 0
        verify(module)
    if args.inline_resources:
        from .ir.resources import inline_resources
        inline_resources(module)
    notes = _convert_legalize(module, args)
    if args.target == "minimum" or (args.target is None and args.emit == "bytecode"):
        from .verifier.versions import version_report
        least = version_report(module)[0]
        target = least or spec.current_version()    # None: the writer names what no version carries
        if least is not None:
            notes.append(f"note: target {least}, the oldest StableHLO version that can carry the module")
    else:
        target = given
    if args.emit == "bytecode":
        data = serialize(module, target, strip_debuginfo=args.strip_debuginfo)
    else:
        if args.target is not None:      # what an artifact at that target holds (refused if it cannot)
            module = deserialize(serialize(module, target, strip_debuginfo=args.strip_debuginfo))
        data = print_module(module, strip_debuginfo=args.strip_debuginfo).encode()
    write_output(args.output, data)
    for line in notes:                  # once the output is written
        print(line, file=sys.stderr)
    return 0


def _convert_legalize(module, args) -> list:
    """CHLO legalization for convert: always with --legalize-chlo, never with
    --no-legalize-chlo, else when the output is an artifact (which cannot hold CHLO)."""
    want = args.legalize_chlo
    if want is None:
        want = args.emit == "bytecode" or args.target is not None
    if not want or not any(op.name.startswith("chlo.") for op in module.walk()):
        return []
    from .transforms import legalize_chlo
    counts = legalize_chlo(module)
    done = ", ".join(f"{n} x{c}" if c > 1 else n for n, c in sorted(counts.items()))
    how = "" if args.legalize_chlo else " (--no-legalize-chlo keeps them)"
    return [f"note: legalized CHLO to StableHLO: {done}{how}"]


# ------------------------------------------------------------------ spec, inspect
def cmd_spec(args) -> int:
    from . import spec
    from .specinfo import format_op_with_types, resolve_op
    if args.check:
        problems = spec.check()
        for p in problems:
            print(f"error: {p}", file=sys.stderr)
        if not problems:
            print(f"spec: every file is valid and consistent; {spec.BUNDLE_NAME} is up to date")
        return 1 if problems else 0
    if args.op:
        print(format_op_with_types(resolve_op(args.op)))
    else:
        print(spec.format_op_table())
    return 0


def cmd_inspect(args) -> int:
    from .inspection import format_inspection, inspect_bytes
    module, data = _read_program(args.file, keep_bytes=True)
    info = inspect_bytes(data, module)
    if args.json:
        out = (json.dumps(info, indent=1) + "\n").encode()
    else:
        out = format_inspection(info).encode()
    write_output("-", out)
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
    for flag in ("entry", "inputs", "random_inputs", "dim", "rtol", "atol", "max_ulp"):
        if getattr(args, flag) is not None:
            raise UsageError(f"--{flag.replace('_', '-')} goes with --program")
    if args.suite == "generated":
        return _conform_generated(args)
    if args.full or args.target:
        raise UsageError("--full and --target go with --suite generated")
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


def _conform_generated(args) -> int:
    """`conform --suite generated`: the cases generated from the spec with independent
    oracles (conformance/generated); the fast subset unless --full."""
    from .conformance import get_backend, load_known_failures, run_suite
    from .conformance.generated import generate_cases
    if args.corpus:
        raise UsageError("--corpus goes with the upstream-program suite, not --suite generated")
    if args.timeout is not None and args.timeout <= 0:
        raise UsageError("--timeout must be positive")
    cases = generate_cases(full=args.full, pattern=args.pattern, op=args.op)
    if not cases:
        raise UsageError("no cases selected")
    if args.export:
        from .conformance.generated.export import export_generated
        from . import spec as _spec
        target = args.target or "1.0.0"
        _spec.parse_version(target)
        try:
            path = export_generated(cases, args.export, target=target)
        except OSError as e:
            raise UsageError(f"cannot write cases to {args.export}: {e.strerror}") from None
        print(f"wrote {len(cases)} case(s) to {args.export} (manifest {path}, artifacts for {target})")
        return 0
    from pathlib import Path
    known = None
    for entry in args.known_failures or []:      # repeatable; NAME=FILE for one backend only
        name, eq, path = entry.partition("=")
        if eq and name == args.backend:
            entry = path
        elif eq and not Path(entry).exists():
            continue                              # another backend's list
        known = {**(known or {}), **load_known_failures(entry)}
    backend = get_backend(args.backend, extra_ulps=args.extra_ulps)
    try:
        ok, why = backend.available()
        if not ok:
            raise UsageError(f"backend {args.backend} is unavailable: {why}")

        def progress(o):
            if args.verbose or (o.status != "pass" and not (known and o.id in known)):
                msg = f": {o.message}" if o.message else ""
                print(f"{o.status.upper()}: {o.id}{msg}", flush=True)
        report = run_suite(backend, cases, timeout=args.timeout, known=known, strict=args.strict,
                           complete=False, progress=progress, jobs=args.jobs)
    finally:
        backend.close()
    text = report.format(verbose=False)
    print("\n".join(l for l in text.splitlines() if not l.split(":", 1)[0] in ("PASS", "FAIL", "ERROR", "UNSUPPORTED")))
    if args.json:
        write_atomically(args.json, json.dumps(report.to_json(), indent=1).encode())
    return 0 if report.ok else 1


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
    from .conformance.program import parse_dims
    from .shape_poly import expand_dims_for_file
    dims = parse_dims(args.dim)
    if dims and args.random_inputs is not None:
        dims = expand_dims_for_file(args.program, dims)
    case = program_case(pathlib.Path(args.program), entry, inputs=inputs, seed=args.random_inputs,
                        case_id=f"{os.path.basename(args.program)}@{entry}", dims=dims,
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
        write_output(args.json, json.dumps(report.to_json(), indent=1).encode())
    return 0 if o.status == "pass" or (o.status == "unsupported" and not args.strict) else 1


# ------------------------------------------------------------------ the parser
def _version_string() -> str:
    from . import __version__, spec
    return (f"stablehlo-ref {__version__} (StableHLO {spec.current_version()}; reads and writes "
            f"portable artifacts {spec.minimum_version()} .. {spec.current_version()})")


class _VersionAction(argparse.Action):
    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        print(_version_string())
        parser.exit(0)


def build_parser() -> argparse.ArgumentParser:
    p = _ArgParser(prog="stablehlo-ref", description="Pure-Python StableHLO: parse, print, run and check programs.")
    p.add_argument("--version", action=_VersionAction,
                   help="print the version and the StableHLO versions supported, then exit")
    sub = p.add_subparsers(dest="command", parser_class=_ArgParser, metavar="COMMAND")
    file_help = "MLIR text, a portable artifact or a jax.export payload (- for stdin)"

    r = sub.add_parser("run", help="run a function (or, with --check, upstream-style test files)",
                       description="Interpret one function on numpy inputs and print its results; with --check, "
                                   "run upstream-style test files.")
    r.add_argument("files", nargs="+", metavar="FILE", help=file_help + "; several with --check")
    r.add_argument("--entry", default="main", metavar="NAME", help="the function to run (default main)")
    r.add_argument("--input", action="append", metavar="A.npy",
                   help="one argument as a .npy file (- for stdin); repeat once per argument, in order")
    r.add_argument("--inputs", metavar="ARGS.npz",
                   help="all arguments in one .npz, named as the function names them (x, w1, ... or "
                        "jax.arg_info), or arg_0, arg_1, ...")
    r.add_argument("--cast", action="store_true",
                   help="convert arrays whose dtype differs from the parameter's (refused otherwise)")
    r.add_argument("-o", "--output", metavar="OUT",
                   help="save the results: a path ending in .npy holds a single result; any other path gets an .npz of result_0, result_1, ... "
                        "(written atomically; - writes the .npz to stdout instead of the printed results)")
    r.add_argument("--check", action="store_true",
                   help="run each // ----- chunk's public functions (an artifact's, as one chunk) without arguments, evaluating check ops")
    r.add_argument("--json", metavar="OUT.json", help="with --check: write every case's outcome as JSON")
    r.add_argument("--trace", action="store_true", help="print each op's location, name and results to stderr")
    r.add_argument("--trace-op", action="append", metavar="NAME",
                   help="with --trace: only ops named NAME ('add' = stablehlo.add); repeatable")
    r.add_argument("--trace-first", type=int, metavar="N",
                   help="with --trace: only the first N executions of each op (loop bodies run many times)")
    r.add_argument("--probe", metavar="DIR",
                   help="write every op's results as DIR/NNNNNN_OP_I.npy (the op's I-th result), listed in DIR/probe.tsv")
    r.add_argument("--no-verify", action="store_true", help="interpret without verifying the module first")
    add_limit_flags(r)
    r.set_defaults(fn=cmd_run)

    v = sub.add_parser("validate", help="parse and verify files; print ok or one diagnostic per problem",
                       description="Parse and verify each file; print `ok: FILE (minimum StableHLO version V)` "
                                   "or one diagnostic per problem.")
    add_nesting_flag(v)
    v.add_argument("files", nargs="+", metavar="FILE", help=file_help)
    v.add_argument("--json", action="store_true", help="print one JSON report on stdout")
    v.add_argument("--target", metavar="X.Y.Z", help="also list everything StableHLO X.Y.Z cannot carry")
    v.add_argument("--profile", metavar="P", help="also say whether each valid file runs correctly on the backend whose "
                   "capability profile P is (written by `conformance --profile`); 1 when it does not")
    v.set_defaults(fn=cmd_validate)

    pr = sub.add_parser("print", help="print a module as MLIR text (pretty or --generic) or as bytecode",
                        description="Print a module as stablehlo-opt does: pretty form, no locations unless --debuginfo.")
    add_nesting_flag(pr)
    pr.add_argument("file", metavar="FILE", help=file_help)
    pr.add_argument("-o", "--output", metavar="OUT", help="write to OUT instead of stdout (atomically)")
    pr.add_argument("--emit", choices=("text", "bytecode"), default="text",
                    help="text (default) or bytecode: a portable artifact at the current version")
    pr.add_argument("--generic", action="store_true", help="print every op in MLIR's generic form")
    pr.add_argument("--debuginfo", action="store_true",
                    help="print every location as MLIR's -mlir-print-debuginfo does (#loc aliases)")
    pr.add_argument("--strip-debuginfo", action="store_true", help="print no locations (the default)")
    pr.add_argument("--elide-constants", type=int, metavar="N",
                    help="print constants of more than N elements as dense_resource<__elided__> "
                         "(MLIR's --mlir-elide-elementsattrs-if-larger)")
    pr.set_defaults(fn=cmd_print)

    c = sub.add_parser("convert", help="write a program as a portable artifact at a target version, or as text",
                       description="Write a program (text or artifact) as a portable artifact at a target version, "
                                   "or as the text that artifact holds.")
    add_nesting_flag(c)
    c.add_argument("input", metavar="IN", help="a .mlir text file, a portable artifact or a jax.export payload (- for stdin)")
    c.add_argument("-o", "--output", required=True, metavar="OUT", help="output path (- for stdout); written atomically")
    c.add_argument("--target", default=None, metavar="V",
                   help="StableHLO version X.Y.Z, 'current' or 'minimum' (default: minimum, the oldest version that can carry the module)")
    c.add_argument("--emit", choices=("bytecode", "text"), default="bytecode",
                   help="bytecode (default): a portable artifact; text: the StableHLO text it holds")
    c.add_argument("--legalize-chlo", action=argparse.BooleanOptionalAction, default=None,
                   help="rewrite chlo.* ops into StableHLO ops (default: when writing an artifact)")
    c.add_argument("--strip-debuginfo", action="store_true", help="write no locations")
    c.add_argument("--no-verify", action="store_true",
                   help="write the module without verifying it first (as a bad artifact read back can hold)")
    c.add_argument("--inline-resources", action="store_true",
                   help="write dense_resource<...> constants as dense<...> (VHLO cannot hold resources)")
    c.set_defaults(fn=cmd_convert)

    s = sub.add_parser("spec", help="list ops, or show one op's spec entry",
                       description="List the ops of the spec, or show one op's entry with its type classes spelled out.")
    s.add_argument("op", nargs="?", metavar="OP", help="an op name: add, stablehlo.add, chlo.erf, erf")
    s.add_argument("--check", action="store_true",
                   help="validate every spec file against its schema, run the consistency checks and check "
                        "that spec/validated.json (what runs load) matches the files; exit 1 on a problem")
    s.set_defaults(fn=cmd_spec)

    ins = sub.add_parser("inspect", help="summarize a module: version, producer, signature, ops, dialects",
                         description="Summarize a program: artifact version and producer, entry signature with "
                                     "argument names and shardings, ops with counts, dialects, custom-call targets, "
                                     "the minimum StableHLO version that can carry it, jax.export metadata.")
    add_nesting_flag(ins)
    ins.add_argument("file", metavar="FILE", help=file_help)
    ins.add_argument("--json", action="store_true", help="print the summary as JSON")
    ins.set_defaults(fn=cmd_inspect)

    cf = sub.add_parser("conformance", aliases=["conform"],
                        help="run the conformance suite on a backend (reference, xla, upstream, iree)")
    cf.add_argument("--backend", metavar="NAME", action="append",
                    help="reference | xla | xla:<platform> (xla:cuda) | upstream | iree | iree:<driver> (iree:cuda) | "
                         "a plug-in's entry-point name | module:Class; repeat it for a campaign over several backends")
    cf.add_argument("--suite", choices=("corpus", "generated"), default="corpus",
                    help="corpus: upstream-style checked programs (default); generated: cases generated from "
                         "the spec with independent oracles (conformance/generated)")
    cf.add_argument("--full", action="store_true", help="with --suite generated: every case, not the fast subset")
    cf.add_argument("--target", metavar="VERSION",
                    help="with --suite generated --export: StableHLO version of the portable artifacts (default 1.0.0)")
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
    cf.add_argument("--dim", action="append", metavar="NAME=SIZE",
                    help="with --random-inputs: the size of a symbolic dimension (jax.export's dimension "
                         "variables, e.g. b=5: dimensions derived from them, such as 2*b or b + 1, follow; "
                         "or one such dimension's size, e.g. '2*b=10'; or argI.D=SIZE for dimension D of "
                         "argument I); repeatable")
    cf.add_argument("--rtol", type=float, metavar="R", help="with --program: relative tolerance for float outputs")
    cf.add_argument("--atol", type=float, metavar="A", help="with --program: absolute tolerance for float outputs")
    cf.add_argument("--max-ulp", type=int, metavar="N", help="with --program: ULP bound for float outputs")
    cf.set_defaults(fn=cmd_conform)
    return p


def format_reference() -> str:
    """The command reference in README (between its `cli-reference` markers), made from the
    same argparse definitions as `--help`; tests/test_cli_readme.py keeps README equal to it."""
    from .cli_reference import render_reference
    return render_reference(build_parser())


def _internal_error(e: BaseException) -> int:
    if os.environ.get("STABLEHLO_REF_TRACEBACK"):
        import traceback
        traceback.print_exc()
    msg = str(e).splitlines()[0] if str(e) else ""
    print(f"error: internal error: {type(e).__name__}: {msg} (a bug in stablehlo-ref; "
          "STABLEHLO_REF_TRACEBACK=1 shows where)", file=sys.stderr)
    return 70


def main(argv=None) -> int:
    from .diagnostics import format_error
    install_signal_cleanup()
    _SOURCES.clear()
    # IEEE overflow, underflow and invalid operations are defined results of the programs and
    # values this tool handles (inf, 0, NaN), never messages for the user: numpy's
    # floating-point warnings stay off for the whole command
    import warnings
    warnings.filterwarnings("ignore", category=RuntimeWarning,
                            message=r"(overflow|underflow|invalid value|divide by zero) encountered")
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        global _PROGRAM_LIMITS
        _PROGRAM_LIMITS = limits_from_args(args)
        if not getattr(args, "fn", None):
            parser.print_help(sys.stderr)
            return 2
        return args.fn(args)
    except StableHLOError as e:
        print(format_error(e, sources=_SOURCES), file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        try:                              # nobody reads stdout any more: quiet exit
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return 0
    except RecursionError:
        print("error: program nesting too deep for this Python (raise the limit with "
              "sys.setrecursionlimit, or simplify the program)", file=sys.stderr)
        return 1
    except MemoryError:
        print("error: out of memory", file=sys.stderr)
        return 1
    except SystemExit as e:         # --help, --version
        return e.code if isinstance(e.code, int) else 0
    except Exception as e:   # a bug of this project: one line, never a traceback
        return _internal_error(e)


if __name__ == "__main__":
    sys.exit(main())
