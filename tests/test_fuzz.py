"""CI-sized fuzzing (the long campaigns are `python -m stablehlo_ref.fuzz`, see README):
mutated text and artifacts raise only the project's errors and print back stably, random valid
programs keep their text and results through every round trip, random loop nests give the
same results under every tier of the interpreter, and the command line never
shows a traceback. Seeds: examples/, programs generated here, and (when present) the corpora
and artifacts in ../shared."""
from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from stablehlo_ref.fuzz import (FUZZ_LIMITS, SHARED, bytecode_seeds, check_bytecode, check_cli,
                                check_loops, check_program, check_text, text_seeds)
from stablehlo_ref.fuzz.mutate import mutate_bytes, mutate_text
from stablehlo_ref.fuzz.programs import check_generated, random_program

_TEXT = text_seeds(shared=False)
_BLOBS = bytecode_seeds(shared=False)
_SETTINGS = dict(deadline=None, derandomize=True, database=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@settings(max_examples=600, **_SETTINGS)
@given(st.integers(0, 2**63))
def test_mutated_text(seed):
    rng = random.Random(seed)
    check_text(mutate_text(rng, rng.choice(_TEXT), _TEXT))


@settings(max_examples=800, **_SETTINGS)
@given(st.integers(0, 2**63))
def test_mutated_artifacts(seed):
    rng = random.Random(seed)
    check_bytecode(mutate_bytes(rng, rng.choice(_BLOBS), _BLOBS))


@settings(max_examples=300, **_SETTINGS)
@given(st.integers(0, 2**63))
def test_random_loop_nests_agree_across_tiers(seed):
    check_loops(seed)


@settings(max_examples=40, **_SETTINGS)
@given(st.integers(0, 2**63))
def test_random_valid_programs(seed):
    check_program(seed)


def test_artifacts_truncated_at_every_offset():
    data = _BLOBS[0]
    for n in range(len(data)):
        check_bytecode(data[:n])


@pytest.fixture(scope="module")
def shared_seeds():
    if not (SHARED / "stablehlo-tests").is_dir() or not (SHARED / "vectors" / "portable").is_dir():
        pytest.skip("../shared corpora are not present")
    texts = text_seeds(shared=True)
    blobs = [p.read_bytes() for p in sorted((SHARED / "vectors" / "portable").glob("*.mlirbc"))]
    return texts, blobs


def test_mutated_corpus_text_and_artifacts(shared_seeds):
    texts, blobs = shared_seeds
    rng = random.Random(18)
    for _ in range(500):
        check_text(mutate_text(rng, rng.choice(texts), texts))
    for _ in range(500):
        check_bytecode(mutate_bytes(rng, rng.choice(blobs), blobs))


def test_mutated_files_through_the_command_line(tmp_path):
    rng = random.Random(7)
    for i in range(60):
        if i % 2:
            data = mutate_text(rng, rng.choice(_TEXT), _TEXT).encode()
            path = tmp_path / "in.mlir"
        else:
            data = mutate_bytes(rng, rng.choice(_BLOBS), _BLOBS)
            path = tmp_path / "in.mlirbc"
        path.write_bytes(data)
        out = tmp_path / "out.bin"
        cmd = [["validate", str(path)], ["print", str(path)], ["print", "--generic", str(path)],
               ["convert", str(path), "-o", str(out)], ["run", str(path)]][i % 5]
        check_cli(cmd)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tmp-")]


def test_generated_programs_cover_many_ops():
    ops = set()
    for seed in range(60):
        ops |= set(__import__("re").findall(r"stablehlo\.\w+", random_program(random.Random(seed)).text))
    assert len(ops) >= 30, sorted(ops)


def test_random_valid_programs_against_xla():
    """Differential: integer programs (exact on every host) give the same results on XLA."""
    pytest.importorskip("jax")
    from stablehlo_ref.conformance.backends import get_backend
    from stablehlo_ref.conformance.program import run_program
    # (integers only: float results depend on the host's FMA and denormal handling)
    elems = ("i1", "i8", "i16", "i32", "i64", "ui8", "ui16", "ui32", "ui64")
    # division and remainder by zero and power of negative exponents are implementation-defined
    exclude = {"stablehlo.divide", "stablehlo.remainder", "stablehlo.power"}
    failures = []
    backend = get_backend("xla")
    try:
        for seed in range(40):
            p = random_program(random.Random(seed), elems=elems, exclude_ops=exclude)
            check_generated(p, FUZZ_LIMITS)
            report = run_program(backend, p.text, inputs=p.inputs)
            for o in report.outcomes:
                if o.status != "pass":
                    failures.append(f"seed {seed}: {o.status}: {o}\n{p.text}")
    finally:
        getattr(backend, "close", lambda: None)()
    assert not failures, failures[0]
