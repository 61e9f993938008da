"""Markers for a fast inner loop, assigned at collection from what each test reads:

- `corpus`: reads the upstream corpora or artifacts in ../shared (or is parametrized over them);
- `interop`: runs a peer (jax/jaxlib, XLA, IREE, upstream's C++ interpreter);
- `slow`: takes seconds on its own (worker restarts, subprocesses, big modules).

`python -m pytest -n auto -q -m "not corpus and not interop and not slow" tests` is the inner
loop; CI runs everything."""
import functools
import inspect
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

_CORPUS = re.compile(r"\bSHARED\b|\bVECTORS\b|corpus_files|_sample\(|shared/|\bcorpus\b")
_INTEROP = re.compile(r"\bjax\b|\bjaxlib\b|\biree\b|HAVE_JAX|HAVE_IREE|\"xla\"|'xla'|\"upstream\"|_backend_sample")
_MODULE_INTEROP = re.compile(r"^\w+ = pytest\.importorskip\(\"(jax|jaxlib|iree)", re.M)
_SLOW = {"test_worker_timeout_restarts_the_worker", "test_upstream_worker_survives_an_abort",
         "test_leaf_ops_after_a_big_nested_section", "test_many_ops_roundtrip_exactly",
         "test_each_case_is_a_test", "test_known_failures_are_strict_xfails", "test_backend_is_required",
         "test_cli_entry_point_subprocess", "test_check_command_reports_current",
         "test_no_false_positives_on_valid_programs", "test_cli_spec_entry_point_subprocess"}


@functools.lru_cache(maxsize=None)
def _source(obj) -> str:
    try:
        return inspect.getsource(obj)
    except (OSError, TypeError):
        return ""


def pytest_configure(config):
    for name, text in (("corpus", "reads the upstream corpora in ../shared"),
                       ("interop", "runs jax/XLA, IREE or upstream's C++ interpreter"),
                       ("slow", "takes seconds on its own")):
        config.addinivalue_line("markers", f"{name}: {text}")


def pytest_collection_modifyitems(config, items):
    for item in items:
        fn = getattr(item, "function", None)
        if fn is None:
            continue
        src = _source(fn)
        mod = _source(item.module) if item.module is not None else ""
        params = getattr(getattr(item, "callspec", None), "id", "")
        if _CORPUS.search(src) or ".mlir" in params:
            item.add_marker(pytest.mark.corpus)
        if _INTEROP.search(src) or _MODULE_INTEROP.search(mod):
            item.add_marker(pytest.mark.interop)
        if fn.__name__ in _SLOW:
            item.add_marker(pytest.mark.slow)
