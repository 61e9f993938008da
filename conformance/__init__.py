"""The backend conformance suite: cases built from upstream-style checked test programs,
backend adapters (reference, xla, upstream, iree), a runner and its report.

    from stablehlo_ref.conformance import load_cases, get_backend, run_suite
    cases = load_cases(["path/to/stablehlo-tests/testdata"])
    with get_backend("xla") as b:
        report = run_suite(b, cases)
    print(report.format())

See conformance/README.md. Optional dependencies (jax, iree) are imported only by the
adapters that need them, in their worker subprocess."""
from .backends import (Backend, BackendError, BackendUnsupported, IreeBackend, ReferenceBackend,
                       UpstreamBackend, XlaBackend, get_backend, register_backend)
from .cases import Case, Feed, NotRunnable, Rule, export_cases, extract_cases, load_cases, load_exported, strip_checks
from .program import program_case, program_rule, random_inputs, run_program
from .compare import compare_case, compare_output, describe_mismatch
from .runner import CaseOutcome, Report, load_known_failures, run_case, run_suite

__all__ = ["Backend", "BackendError", "BackendUnsupported", "IreeBackend", "ReferenceBackend",
           "UpstreamBackend", "XlaBackend", "get_backend", "register_backend", "Case", "Feed", "NotRunnable",
           "Rule", "export_cases", "load_exported", "extract_cases", "load_cases", "strip_checks", "compare_case", "compare_output",
           "describe_mismatch", "program_case", "program_rule", "random_inputs", "run_program", "CaseOutcome", "Report", "load_known_failures", "run_case", "run_suite"]
