"""Our printed text means to MLIR what the original means: for a sample of the upstream corpora,
every chunk that jaxlib's MLIR parser (`jaxlib.mlir.ir.Module.parse`) accepts is parsed by us,
printed (pretty and generic), and jaxlib must accept our text and print it exactly as it prints
the original. Skipped without jax or without ../shared."""
from __future__ import annotations

import os

import pytest

from corpus import SHARED, corpus_files
from stablehlo_ref import parse, print_module
from stablehlo_ref.checkrun import split_chunks

os.environ.setdefault("JAX_PLATFORMS", "cpu")
pytest.importorskip("jax")

# A sample: all of ops, vhlo and interpret (most interpret chunks use the interpreter/check
# dialects, which jaxlib lacks), and every 8th testdata file.
FILES = (corpus_files("ops", "**/*.mlir") + corpus_files("vhlo", "**/*.mlir")
         + corpus_files("interpret", "**/*.mlir") + corpus_files("testdata", "**/*.mlir")[::8])

# Chunks left out, with the reason. These concern jaxlib itself, not our printer.
SKIP = {
    # jaxlib's parser crashes on the original text (an invalid op it does not diagnose)
    "ops/ops_stablehlo.mlir#29": "jaxlib crashes on the original",
    # jaxlib's StableHLO predates custom_call's `result_tilings` property: the original keeps it
    # as a discardable attribute, our generic form writes it as a property that jaxlib drops
    "vhlo/vhlo_to_version_downgrade.1_17_0.mlir#1": "jaxlib predates result_tilings",
    "vhlo/vhlo_to_version_downgrade_invalid.1_17_0.mlir#0": "jaxlib predates result_tilings",
}


@pytest.fixture(scope="module")
def mlir():
    from jax._src.interpreters import mlir as jmlir
    from jaxlib.mlir import ir
    ctx = jmlir.make_ir_context()

    def canonical(text: str) -> str:
        with ctx:
            return ir.Module.parse(text).operation.get_asm(enable_debug_info=False)
    return canonical


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/stablehlo-tests not present")
@pytest.mark.parametrize("rel", FILES)
def test_jaxlib_reads_our_printed_corpus_as_the_original(rel, mlir):
    problems = []
    for i, chunk in enumerate(split_chunks((SHARED / rel).read_text())):
        case = f"{rel}#{i}"
        if case in SKIP:
            continue
        try:
            want = mlir(chunk)
        except Exception:       # upstream rejects the chunk (or needs dialects jaxlib lacks)
            continue
        try:
            module = parse(chunk, rel)
        except Exception:       # the corpus tests list the few chunks we cannot parse
            continue
        for generic in (False, True):
            form = "generic" if generic else "pretty"
            printed = print_module(module, generic=generic)
            try:
                got = mlir(printed)
            except Exception as e:
                problems.append(f"{case} ({form}): jaxlib rejects our text: {str(e).splitlines()[1:2]}")
                continue
            if got != want:
                problems.append(f"{case} ({form}): jaxlib reads our text as a different module")
    assert not problems, "\n".join(problems)


# Every chunk of these corpora that jaxlib parses must print here exactly as MLIR prints it
# (pretty form, without locations): value names, float digits, elided defaults, spacing.
EXACT_FILES = (corpus_files("ops", "**/*.mlir") + corpus_files("vhlo", "**/*.mlir")
               + corpus_files("interpret", "**/*.mlir") + corpus_files("testdata", "**/*.mlir"))
EXACT_SKIP = dict(SKIP, **{
    # an invalid custom_call whose call_target_name is a typed string: MLIR's pretty form drops
    # the type; we print the generic form so nothing is lost
    "vhlo/legalize_stablehlo_to_vhlo_invalid.mlir#0": "typed call_target_name",
    # stablehlo-opt rejects this while parsing (the chunk expects that error), as we do;
    # jaxlib's parser does not check VHLO dictionary keys
    "vhlo/vhlo_attributes_invalid.mlir#0": "rejected while parsing, as upstream",
})
# the generic form of arith float ops carries their default `fastmath` property, which we do
# not model (arith is outside StableHLO)
GENERIC_SKIP = {f"vhlo/stablehlo_legalize_to_vhlo_mixed.mlir#{i}" for i in (0, 4, 5, 7, 8)}


@pytest.fixture(scope="module")
def mlir_forms():
    from jax._src.interpreters import mlir as jmlir
    from jaxlib.mlir import ir
    ctx = jmlir.make_ir_context()

    def forms(text: str) -> dict:
        with ctx:
            op = ir.Module.parse(text).operation
            return {"pretty": op.get_asm(enable_debug_info=False),
                    "generic": op.get_asm(enable_debug_info=False, print_generic_op_form=True),
                    "debuginfo": op.get_asm(enable_debug_info=True)}
    return forms


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/stablehlo-tests not present")
@pytest.mark.parametrize("rel", EXACT_FILES)
def test_we_print_what_mlir_prints(rel, mlir_forms):
    """Pretty and generic form without locations, and the pretty form with every location
    (MLIR's -mlir-print-debuginfo: implicit positions, `#loc` aliases before/after the module)."""
    problems = []
    for i, chunk in enumerate(split_chunks((SHARED / rel).read_text())):
        case = f"{rel}#{i}"
        if case in EXACT_SKIP:
            continue
        try:
            want = mlir_forms(chunk)
        except Exception:
            continue
        try:
            module = parse(chunk, "-")        # jaxlib names a parsed string "-"
        except Exception:
            continue
        got = {"pretty": print_module(module, strip_debuginfo=True),
               "generic": print_module(module, strip_debuginfo=True, generic=True),
               "debuginfo": print_module(module, debuginfo=True)}
        for form in ("pretty", "generic", "debuginfo"):
            if form == "generic" and case in GENERIC_SKIP:
                continue
            if got[form] != want[form]:
                first = next((f"-{a}\n+{b}" for a, b in zip(want[form].splitlines(), got[form].splitlines())
                              if a != b), "(line count differs)")
                problems.append(f"{case} ({form}):\n{first}")
    assert not problems, "\n".join(problems)
