"""pytest plugin: every conformance case as one test, so a backend's CI can run the suite with
pytest's selection, reporting and parallelism (pytest-xdist).

    pytest --pyargs stablehlo_ref.conformance.suite \\
        --stablehlo-backend xla --stablehlo-corpus path/to/stablehlo-tests/testdata \\
        [--stablehlo-known-failures FILE] [--stablehlo-pattern GLOB] [--stablehlo-op NAME] \\
        [--stablehlo-timeout S] [--stablehlo-extra-ulps N]

A case listed in the known-failures file (`case-id<TAB>reason`) is a strict xfail: it must keep
failing, and passes are reported as failures so that the list shrinks. A case the backend
cannot run is skipped with its reason. Test ids are the case ids (`file#chunk@function`).

The plugin is registered as a `pytest11` entry point named after this module, so installing
the package enables it (`-p stablehlo_ref.conformance.pytest_plugin` still works and loads
it once; `-p no:stablehlo_ref.conformance.pytest_plugin` disables it). It imports the rest of
the package by absolute name, for the reason suite.py gives."""
from __future__ import annotations

import os

import pytest


def pytest_addoption(parser):
    g = parser.getgroup("stablehlo-conformance", "StableHLO backend conformance suite")
    g.addoption("--stablehlo-backend", default=None,
                help="backend to test: reference, xla, xla:<platform>, upstream, iree, iree:<driver>, "
                      "a plug-in's entry-point name, or module:Class")
    g.addoption("--stablehlo-corpus", action="append", default=None,
                help="a corpus folder or file, or an exported case folder (repeatable; default $STABLEHLO_TESTS)")
    g.addoption("--stablehlo-known-failures", default=None, help="case-id<TAB>reason lines")
    g.addoption("--stablehlo-pattern", default=None, help="glob on case ids")
    g.addoption("--stablehlo-op", default=None, help="only cases using this op")
    g.addoption("--stablehlo-timeout", type=float, default=60.0, help="seconds per case")
    g.addoption("--stablehlo-extra-ulps", type=int, default=0, help="ulps added to float tolerances")


def _corpora(config):
    dirs = config.getoption("--stablehlo-corpus")
    if not dirs and os.environ.get("STABLEHLO_TESTS"):
        root = os.environ["STABLEHLO_TESTS"]
        dirs = [os.path.join(root, d) for d in ("interpret", "math", "testdata")
                if os.path.isdir(os.path.join(root, d))]
    return dirs or []


def pytest_generate_tests(metafunc):
    if "stablehlo_case" not in metafunc.fixturenames:
        return
    from stablehlo_ref.conformance.cases import load_cases
    from stablehlo_ref.conformance.runner import is_flaky, load_known_failures
    config = metafunc.config
    if not config.getoption("--stablehlo-backend"):
        raise pytest.UsageError("the conformance suite needs --stablehlo-backend NAME")
    dirs = _corpora(config)
    if not dirs:
        raise pytest.UsageError("the conformance suite needs --stablehlo-corpus DIR (or $STABLEHLO_TESTS)")
    cases = load_cases(dirs, config.getoption("--stablehlo-pattern"), config.getoption("--stablehlo-op"))
    kf = config.getoption("--stablehlo-known-failures")
    known = load_known_failures(kf) if kf else {}
    params = []
    for c in cases:
        marks = ([pytest.mark.xfail(reason=known[c.id], strict=not is_flaky(known[c.id]))]
                 if c.id in known else [])
        params.append(pytest.param(c, id=c.id, marks=marks))
    metafunc.parametrize("stablehlo_case", params)


@pytest.fixture(scope="session")
def stablehlo_backend(request):
    from stablehlo_ref.conformance.backends import get_backend
    config = request.config
    b = get_backend(config.getoption("--stablehlo-backend"), config.getoption("--stablehlo-extra-ulps"))
    ok, why = b.available()
    if not ok:
        pytest.skip(f"backend {b.name} unavailable: {why}")
    yield b
    b.close()


def check_case(backend, case, timeout: float) -> None:
    """Run one case; skip when unsupported, fail with the report's message otherwise."""
    from stablehlo_ref.conformance.runner import run_case
    outcome = run_case(backend, case, timeout)
    if outcome.status == "unsupported":
        pytest.skip(outcome.message)
    if outcome.status != "pass":
        pytest.fail(f"{outcome.status}: {outcome.message}", pytrace=False)
