"""A fuzz campaign: `python -m stablehlo_ref.fuzz --target text|bytecode|programs|loops|cli --minutes N`.

Mutation-based (seeded from examples/, generated programs and, when present, the corpora in
../shared), reproducible from `--seed`. Each input runs under a time alarm (`--per-input`) and
the process under an address-space cap (`--memory-mb`); failures are grouped by signature
(exception type and innermost frame), the first input of each saved under `--out`. Prints a
summary line every minute and at the end; exit code 1 when anything failed."""
from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

from . import (FUZZ_LIMITS, Report, bytecode_seeds, cap_memory, check_bytecode, check_cli,
               check_loops, check_program, check_text, record, run_one, text_seeds)
from .mutate import mutate_bytes, mutate_text


def _cli_inputs(rng: random.Random, texts, blobs, tmp: Path):
    """(argv, file) for one mutated file and a random subcommand."""
    if rng.random() < 0.5:
        data = mutate_text(rng, rng.choice(texts), texts).encode("utf-8", "surrogateescape")
        path = tmp / "in.mlir"
    else:
        data = mutate_bytes(rng, rng.choice(blobs), blobs)
        path = tmp / "in.mlirbc"
    path.write_bytes(data)
    out = tmp / "out.bin"
    cmd = rng.choice([["validate", str(path)], ["print", str(path)], ["print", "--generic", str(path)],
                      ["print", "--debuginfo", str(path)], ["convert", str(path), "-o", str(out)],
                      ["convert", str(path), "-o", str(out), "--target", "current"],
                      ["convert", str(path), "-o", str(out), "--emit", "text"],
                      ["run", str(path), "--entry", "main"], ["run", "--check", str(path)]])
    return cmd, data


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m stablehlo_ref.fuzz", description=__doc__.split("\n")[0])
    p.add_argument("--target", required=True, choices=("text", "bytecode", "programs", "loops", "cli"))
    p.add_argument("--minutes", type=float, default=1.0)
    p.add_argument("--max-inputs", type=int, default=None)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--per-input", type=float, default=20.0,
                   help="CPU seconds before an input counts as a hang")
    p.add_argument("--memory-mb", type=int, default=4096, help="address-space cap of the campaign process")
    p.add_argument("--out", default="fuzz-findings", help="folder for the first input of each failure")
    p.add_argument("--no-shared", action="store_true", help="do not seed from ../shared")
    p.add_argument("--engine", choices=("mutate", "atheris"), default="mutate",
                   help="the seeded mutation loop, or atheris (coverage-guided; pip install atheris)")
    a = p.parse_args(argv)
    if a.engine == "atheris":
        return _atheris(a)
    rng = random.Random(a.seed)
    out = Path(a.out)
    report = Report(a.target)
    texts = text_seeds(shared=not a.no_shared)
    blobs = bytecode_seeds(shared=not a.no_shared) if a.target in ("bytecode", "cli") else []
    # warm up (imports, the spec, caches) outside the per-input time alarm
    check_text(texts[0])
    if blobs:
        check_bytecode(blobs[0])
    check_program(0)
    cap_memory(a.memory_mb << 20)
    start = time.monotonic()
    deadline = start + a.minutes * 60
    last = start
    tmp = Path(tempfile.mkdtemp(prefix="shlo-fuzz-"))
    try:
        while time.monotonic() < deadline and (a.max_inputs is None or report.inputs < a.max_inputs):
            if a.target == "text":
                sample = mutate_text(rng, rng.choice(texts), texts)
                outcome, exc = run_one(check_text, sample, a.per_input)
            elif a.target == "bytecode":
                sample = mutate_bytes(rng, rng.choice(blobs), blobs)
                outcome, exc = run_one(check_bytecode, sample, a.per_input)
            elif a.target == "programs":
                sample = rng.getrandbits(48)
                outcome, exc = run_one(check_program, sample, a.per_input)
            elif a.target == "loops":
                sample = rng.getrandbits(48)
                outcome, exc = run_one(check_loops, sample, a.per_input)
            else:
                argv_, data = _cli_inputs(rng, texts, blobs, tmp)
                sample = data
                outcome, exc = run_one(check_cli, argv_, a.per_input)
                if exc is not None:
                    sample = (" ".join(argv_[:1]) + "\n").encode() + data
            report.inputs += 1
            report.outcomes[outcome] += 1
            if exc is not None:
                if a.target == "programs":
                    from .programs import random_program
                    sample = random_program(random.Random(sample)).text
                elif a.target == "loops":
                    from .loops import random_loop_program
                    sample = random_loop_program(random.Random(sample)).text
                record(report, exc, sample, out)
            now = time.monotonic()
            if now - last > 60:
                last = now
                report.seconds = now - start
                print(report.summary(), flush=True)
    finally:
        for f in tmp.iterdir():
            f.unlink()
        tmp.rmdir()
    report.seconds = time.monotonic() - start
    print(report.summary(), flush=True)
    return 1 if report.failures else 0


def _atheris(a) -> int:
    """libFuzzer through atheris over the package's own code (instrumented), seeded with the
    same corpus; stops at the first failure (saved by libFuzzer as crash-*)."""
    try:
        import atheris
    except ImportError:
        print("error: atheris is not installed (pip install atheris)", file=sys.stderr)
        return 2
    if a.target not in ("text", "bytecode"):
        print("error: --engine atheris fuzzes the text and bytecode targets", file=sys.stderr)
        return 2
    with atheris.instrument_imports(include=["stablehlo_ref"]):
        from .. import serialization, text  # noqa: F401 - instrumented for coverage
    seeds = text_seeds(shared=not a.no_shared) if a.target == "text" else bytecode_seeds(shared=not a.no_shared)
    corpus = Path(a.out) / f"atheris-{a.target}-corpus"
    corpus.mkdir(parents=True, exist_ok=True)
    for i, sd in enumerate(seeds):
        (corpus / f"seed-{i:05d}").write_bytes(sd.encode() if isinstance(sd, str) else sd)

    def one(data: bytes):
        if a.target == "text":
            check_text(data.decode("utf-8", "surrogateescape"))
        else:
            check_bytecode(data)

    check_text(text_seeds(shared=False)[0])
    cap_memory(a.memory_mb << 20)
    atheris.Setup([sys.argv[0], f"-max_total_time={int(a.minutes * 60)}", f"-timeout={int(a.per_input)}",
                   f"-artifact_prefix={a.out}/", str(corpus)], one)
    atheris.Fuzz()
    return 0


if __name__ == "__main__":
    sys.exit(main())
