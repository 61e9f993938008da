"""README's command reference, rendered from the argparse parser that `--help` prints
(`stablehlo_ref.cli.format_reference`)."""
from __future__ import annotations

import argparse


def _subcommands(parser):
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            seen = set()
            for name, sp in a.choices.items():
                if id(sp) not in seen:
                    seen.add(id(sp))
                    yield name, sp


def _synopsis(name: str, sp) -> str:
    parts = [f"stablehlo-ref {name}"]
    for a in sp._actions:
        if isinstance(a, argparse._HelpAction):
            continue
        if not a.option_strings:
            mv = a.metavar or a.dest
            parts.append(f"{mv}..." if a.nargs in ("+", "*") else f"[{mv}]" if a.nargs == "?" else mv)
            continue
        flag = max(a.option_strings, key=len)
        if a.nargs == 0:
            s = flag
        elif a.choices:
            s = f"{flag} {'|'.join(a.choices)}"
        else:
            s = f"{flag} {a.metavar or a.dest.upper()}"
        parts.append(s if a.required else f"[{s}]")
    return " ".join(parts)


def _md_cell(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("|", "\\|")


def render_reference(p: argparse.ArgumentParser) -> str:
    """Markdown for every subcommand of `p`: its description, synopsis and a table of its
    arguments with their help text."""
    out = []
    for name, sp in _subcommands(p):
        aliases = [n for a in p._actions if isinstance(a, argparse._SubParsersAction)
                   for n, s in a.choices.items() if s is sp and n != name]
        out.append(f"#### `stablehlo-ref {name}`" + (f" (or `{'`, `'.join(aliases)}`)" if aliases else ""))
        out.append("")
        out.append((sp.description or "").strip())
        out.append("")
        out.append("```")
        out.append(_synopsis(name, sp))
        out.append("```")
        out.append("")
        out.append("| argument | meaning |")
        out.append("| --- | --- |")
        for a in sp._actions:
            if isinstance(a, argparse._HelpAction):
                continue
            if a.option_strings:
                mv = "" if a.nargs == 0 else " " + ("|".join(a.choices) if a.choices else (a.metavar or a.dest.upper()))
                label = ", ".join(f"`{o}{mv}`" for o in a.option_strings)
            else:
                label = f"`{a.metavar or a.dest}`"
            out.append(f"| {label.replace('|', chr(92) + '|')} | {_md_cell(a.help or '')} |")
        out.append("")
    return "\n".join(out).rstrip() + "\n"
