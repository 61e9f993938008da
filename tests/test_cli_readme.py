"""README's command reference is the CLI's own: generated from the argparse definitions that
`--help` prints, and every command's --help names exactly the flags README lists."""
import re
from pathlib import Path

import pytest

from stablehlo_ref.cli import build_parser, format_reference, main

README = Path(__file__).resolve().parent.parent / "README.md"


def _block():
    text = README.read_text()
    m = re.search(r"<!-- cli-reference:begin -->\n(.*?)<!-- cli-reference:end -->", text, re.S)
    assert m, "README has no cli-reference block"
    return m.group(1)


def test_readme_reference_is_current():
    assert _block() == format_reference(), (
        "README's command reference is stale: regenerate it with "
        "python -c \"from stablehlo_ref.cli import format_reference; print(format_reference(), end='')\"")


def _commands():
    p = build_parser()
    sub = next(a for a in p._actions if a.__class__.__name__ == "_SubParsersAction")
    return sorted({n for n, sp in sub.choices.items()})


@pytest.mark.parametrize("cmd", _commands())
def test_help_flags_match_readme(cmd, capsys):
    assert main([cmd, "--help"]) == 0
    out = capsys.readouterr().out
    flags = set(re.findall(r"(?<![\w-])(--?[a-z][a-z-]*)", out)) - {"-h", "--help"}
    block = _block()
    name = "conformance" if cmd == "conform" else cmd
    section = block.split(f"#### `stablehlo-ref {name}`", 1)[1].split("#### ", 1)[0]
    table_flags = set(re.findall(r"`(--?[a-z][a-z-]*)", section.split("| argument | meaning |", 1)[1]))
    # every flag of the command is in README, and README lists none it lacks
    declared = {o for a in build_parser()._subparsers._group_actions[0].choices[cmd]._actions
                for o in a.option_strings} - {"-h", "--help"}
    assert table_flags == declared
    assert declared <= flags
    # every flag has help text
    for a in build_parser()._subparsers._group_actions[0].choices[cmd]._actions:
        assert a.help, f"{cmd} {a.option_strings or a.dest} has no help text"


def test_top_level_help_and_version(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for cmd in _commands():
        if cmd != "conform":
            assert cmd in out
    assert main(["--version"]) == 0
    assert re.match(r"stablehlo-ref \d+\.\d+\.\d+ \(StableHLO \d+\.\d+\.\d+", capsys.readouterr().out)
