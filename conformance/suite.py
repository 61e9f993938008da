"""The conformance suite as a pytest module; the plugin (pytest_plugin.py, registered as a
`pytest11` entry point, so installing the package enables it) makes one test per case:

    pytest --pyargs stablehlo_ref.conformance.suite --stablehlo-backend xla --stablehlo-corpus DIR

pytest may import this file under another name than `stablehlo_ref.conformance.suite` (in an
editable install it finds `conformance/suite.py` in the source tree and names it
`conformance.suite`), so it imports the plugin by its installed name: a relative import would
load a second copy of the package, whose exception classes the backend's do not match."""
from stablehlo_ref.conformance.pytest_plugin import check_case


def test_case(stablehlo_case, stablehlo_backend, request):
    check_case(stablehlo_backend, stablehlo_case, request.config.getoption("--stablehlo-timeout"))
