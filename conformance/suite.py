"""The conformance suite as a pytest module; run it with the plugin (see pytest_plugin.py):

    pytest -p stablehlo_ref.conformance.pytest_plugin --pyargs stablehlo_ref.conformance.suite \\
        --stablehlo-backend xla --stablehlo-corpus DIR
"""
from .pytest_plugin import check_case


def test_case(stablehlo_case, stablehlo_backend, request):
    check_case(stablehlo_backend, stablehlo_case, request.config.getoption("--stablehlo-timeout"))
