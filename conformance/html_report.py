"""One self-contained HTML file for people: per backend run, an op x element-type matrix whose
cells are colour-coded by the worst outcome of their cases (fail, error, tolerance exceeded,
unsupported, pass) and link to the list of those cases below it. No scripts, no external
resources: the file can be attached to a CI run and opened anywhere."""
from __future__ import annotations

import html
import re
from collections import Counter, defaultdict
from typing import Dict, List, Sequence, Tuple

from .report import CATEGORIES, CATEGORY_LABELS, category, known_reason, verdict

# worst first: a cell takes the colour of its worst case
SEVERITY = ("fail", "error", "tolerance", "unsupported", "pass")
COLOURS = {"pass": "#1a7f37", "tolerance": "#e3a008", "fail": "#cf222e", "error": "#8250df",
           "unsupported": "#8c959f"}

_TYPE_ORDER = [r"^i1$", r"^(?:s?i|i)\d+$", r"^ui\d+$", r"^f4E", r"^f6E", r"^f8E", r"^bf16$", r"^f16$",
               r"^tf32$", r"^f32$", r"^f64$", r"^complex", r"^!quant", r"."]


def _type_key(t: str):
    for k, pat in enumerate(_TYPE_ORDER):
        if re.search(pat, t):
            num = re.findall(r"\d+", t)
            return (k, int(num[0]) if num else 0, t)
    return (len(_TYPE_ORDER), 0, t)


def _anchor(*parts: str) -> str:
    return "c-" + re.sub(r"[^A-Za-z0-9_-]+", "_", "-".join(parts))


CSS = """
body{font:14px/1.4 system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px;color:#1f2328;background:#fff}
h1{font-size:22px;margin:0 0 8px} h2{font-size:18px;margin:28px 0 8px} h3{font-size:15px;margin:18px 0 6px}
.summary span{margin-right:14px}
.legend span{display:inline-block;padding:4px 10px;margin:0 6px 6px 0;color:#fff;border-radius:3px}
table.matrix{border-collapse:collapse;margin:8px 0 16px}
table.matrix th{font-weight:600;padding:4px 6px;background:#f6f8fa;border:1px solid #d0d7de;white-space:nowrap}
table.matrix th.op{text-align:left;font-family:ui-monospace,monospace;font-size:12px;position:sticky;left:0}
table.matrix thead th{position:sticky;top:0;z-index:1}
table.matrix td{border:1px solid #d0d7de;padding:0;min-width:44px;height:26px;text-align:center}
table.matrix td a{display:block;padding:4px 6px;color:#fff;text-decoration:none;font-weight:600}
table.matrix td.empty{background:#fff}
table.cases{border-collapse:collapse;font-size:12px;margin:4px 0 12px}
table.cases td,table.cases th{border:1px solid #d0d7de;padding:2px 6px;text-align:left;vertical-align:top}
table.cases td.id{font-family:ui-monospace,monospace}
.tag{display:inline-block;padding:0 6px;border-radius:3px;color:#fff}
""" + "".join(f".k-{k}{{background:{v}}}\n" for k, v in COLOURS.items())


def _cells(report) -> Dict[Tuple[str, str], List]:
    cells: Dict[Tuple[str, str], List] = defaultdict(list)
    for o in report.outcomes:
        cells[(o.op or "(unknown op)", o.element_type or "?")].append(o)
    return cells


def _worst(outcomes) -> str:
    cats = {category(o) for o in outcomes}
    for c in SEVERITY:
        if c in cats:
            return c
    return "pass"


def _details(report) -> str:
    d = getattr(report, "description", "") or ""
    return d[len(report.backend) + 2:] if d.startswith(report.backend + ": ") else ("" if d == report.backend else d)


def _run_section(report, index: int) -> str:
    e = html.escape
    name = report.backend
    cells = _cells(report)
    ops = sorted({op for op, _ in cells})
    types = sorted({t for _, t in cells}, key=_type_key)
    cats = Counter(category(o) for o in report.outcomes)
    unexpected = sum(1 for o in report.outcomes if report._bad(o) and verdict(report, o) == "unexpected")
    known = sum(1 for o in report.outcomes if report._bad(o) and verdict(report, o) == "expected")
    out = [f'<section class="run" id="run-{index}">',
           f"<h2>{e(name)} <small>{e(_details(report))}</small></h2>",
           '<p class="summary">' + "".join(
               f'<span><span class="tag k-{c}">{e(CATEGORY_LABELS[c])}</span> {cats.get(c, 0)}</span>'
               for c in CATEGORIES)
           + f"<span>{len(report.outcomes)} cases, {len(report.skipped)} skipped, "
             f"{known} known failure(s), {unexpected} unexpected, {report.seconds:.1f} s</span></p>",
           f'<table class="matrix" id="matrix-{index}"><thead><tr><th>op \\ element type</th>'
           + "".join(f"<th>{e(t)}</th>" for t in types) + "</tr></thead><tbody>"]
    for op in ops:
        row = [f'<tr><th class="op">{e(op)}</th>']
        for t in types:
            os_ = cells.get((op, t))
            if not os_:
                row.append('<td class="empty"></td>')
                continue
            w = _worst(os_)
            n_pass = sum(1 for o in os_ if o.status == "pass")
            counts = Counter(category(o) for o in os_)
            title = f"{op} x {t}: " + ", ".join(f"{counts[c]} {CATEGORY_LABELS[c]}" for c in CATEGORIES if counts[c])
            row.append(f'<td class="k-{w}" data-status="{w}" title="{e(title)}">'
                       f'<a href="#{_anchor(str(index), op, t)}">{n_pass}/{len(os_)}</a></td>')
        out.append("".join(row) + "</tr>")
    out.append("</tbody></table>")
    out.append("<h3>Cases by op and element type</h3>")
    for op in ops:
        for t in types:
            os_ = cells.get((op, t))
            if not os_:
                continue
            out.append(f'<div id="{_anchor(str(index), op, t)}"><b>{e(op)}</b> x <b>{e(t)}</b>'
                       '<table class="cases"><tr><th>case</th><th>variant</th><th>result</th>'
                       "<th>expected?</th><th>max abs / ULP error</th><th>message</th></tr>")
            for o in os_:
                c = category(o)
                reason = known_reason(report, o)
                exp = verdict(report, o) + (f" (known: {reason})" if reason else "")
                err = "" if o.max_abs_error is None else f"{o.max_abs_error:.3g}"
                if o.max_ulp_error is not None:
                    err += f" / {o.max_ulp_error} ULP"
                out.append(f'<tr><td class="id">{e(o.id)}</td><td>{e(o.variant)}</td>'
                           f'<td><span class="tag k-{c}">{e(CATEGORY_LABELS[c])}</span></td>'
                           f"<td>{e(exp)}</td><td>{e(err)}</td><td>{e(o.message)}</td></tr>")
            out.append("</table></div>")
    if report.skipped:
        out.append(f"<h3>Skipped ({len(report.skipped)}: not runnable as cases)</h3><ul>")
        out.extend(f"<li><code>{e(i)}</code>: {e(r)}</li>" for i, r in report.skipped)
        out.append("</ul>")
    out.append("</section>")
    return "\n".join(out)


def html_report(reports: Sequence, title: str = "StableHLO conformance") -> str:
    """The HTML document for one or more runs (a campaign: one matrix per configuration)."""
    e = html.escape
    legend = "".join(f'<span class="k-{c}">{e(CATEGORY_LABELS[c])}</span>' for c in SEVERITY)
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             f"<title>{e(title)}</title><style>{CSS}</style></head><body>",
             f"<h1>{e(title)}</h1>",
             '<p class="legend">' + legend + " (a cell shows passed/total cases and the colour of"
             " its worst outcome; click it for its cases)</p>"]
    if len(reports) > 1:
        parts.append("<ul>" + "".join(
            f'<li><a href="#run-{i}">{e(r.backend)}</a>: {r.counts()["pass"]}/{len(r.outcomes)} passed'
            f"{'' if r.ok else ' (not ok)'}</li>" for i, r in enumerate(reports)) + "</ul>")
    for i, r in enumerate(reports):
        parts.append(_run_section(r, i))
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
