"""The conformance report as people and CI systems read it: the per-case record (status,
matrix category, expected/unexpected), the JSON document (validated by `report.schema.json`),
the terminal summary that separates known from unexpected failures, a progress bar, and
reading reports back from JSON (to merge shards and campaign runs into one report).

Categories (the cells of the HTML matrix): `pass`; `tolerance` (a precision problem: float
outputs outside their tolerance, every differing element finite and within 1% of the expected
value); `fail` (a wrong result: a wrong integer, NaN where a number belongs, a flushed
subnormal, a value more than 1% off, a wrong shape); `error` (compile, run, timeout, crash);
`unsupported` (the backend says it does not implement what the case uses)."""
from __future__ import annotations

import json
import os
import sys
from collections import Counter
from typing import Optional, Sequence

from stablehlo_ref.errors import UsageError

SCHEMA_ID = "stablehlo-ref/conformance-report/1"
CAMPAIGN_SCHEMA_ID = "stablehlo-ref/conformance-campaign/1"
SCHEMA_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "report.schema.json")
CATEGORIES = ("pass", "tolerance", "fail", "error", "unsupported")
CATEGORY_LABELS = {"pass": "pass", "tolerance": "tolerance exceeded", "fail": "fail",
                   "error": "error", "unsupported": "unsupported"}


FLAKY = "flaky:"


def is_flaky(reason: str) -> bool:
    """A known-failure entry whose reason starts with `flaky:` pins a case whose outcome
    depends on the host (CPU features such as flush-to-zero or FMA, seen on machines of the
    same kind): it may pass or fail, and passing does not make it stale."""
    return reason.startswith(FLAKY)


def category(o) -> str:
    if o.status == "fail" and o.tolerance_exceeded:
        return "tolerance"
    return o.status


def known_reason(report, o) -> Optional[str]:
    return (report.known or {}).get(o.id)


def verdict(report, o) -> str:
    """`expected` when the outcome is what the known-failures list says (a listed case fails,
    an unlisted one passes; `flaky:` entries either way), else `unexpected`."""
    bad = report._bad(o)
    reason = known_reason(report, o)
    if reason is None:
        return "unexpected" if bad else "expected"
    if is_flaky(reason):
        return "expected"
    return "expected" if bad else "unexpected"


def case_json(report, o) -> dict:
    d = o.to_json()
    d["category"] = category(o)
    d["verdict"] = verdict(report, o)
    reason = known_reason(report, o)
    d["known_failure"] = reason
    return d


def report_json(report) -> dict:
    """The report of one backend run as a JSON document (schema: report.schema.json)."""
    cats = Counter(category(o) for o in report.outcomes)
    cases = [case_json(report, o) for o in report.outcomes]
    bad = [c for c in cases if c["status"] in ("fail", "error") or (report.strict and c["status"] == "unsupported")]
    d = {"schema": SCHEMA_ID, "backend": report.backend,
         "description": getattr(report, "description", "") or report.backend,
         "seconds": round(report.seconds, 3), "strict": report.strict, "ok": report.ok,
         "summary": {**report.counts(), "skipped": len(report.skipped),
                     "tolerance_exceeded": cats.get("tolerance", 0),
                     "expected_failures": sum(1 for c in bad if c["verdict"] == "expected"),
                     "unexpected_failures": sum(1 for c in bad if c["verdict"] == "unexpected"),
                     "cases": len(cases)},
         "by_op": report.by_op(), "cases": cases,
         "skipped": [{"id": i, "reason": r} for i, r in report.skipped]}
    if report.known is not None:
        d["known_failures"] = {"listed": len(report.known),
                               "unexpected": [o.id for o in report.regressions()],
                               "stale": report.stale()}
    return d


def campaign_json(reports: Sequence) -> dict:
    """Several runs (backend configurations, or shards of one) in one document."""
    return {"schema": CAMPAIGN_SCHEMA_ID, "ok": all(r.ok for r in reports),
            "runs": [report_json(r) for r in reports]}


def write_atomically(path: str, data: bytes) -> None:
    """Write a whole file or nothing (a temporary file beside it, then renamed)."""
    import tempfile
    d = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=d)
    except OSError as e:
        raise UsageError(f"cannot write {path}: {e.strerror}") from None
    try:
        # mkstemp makes the file private; a report gets the mode any new file would get
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise UsageError(f"cannot write {path}: {e.strerror}") from None


def load_schema() -> dict:
    with open(SCHEMA_PATH, encoding="utf-8") as f:
        return json.load(f)


def validate_json(doc: dict) -> None:
    """Raise jsonschema.ValidationError when `doc` is not a valid report or campaign."""
    import jsonschema
    jsonschema.validate(doc, load_schema())


# --------------------------------------------------------------------- terminal output

def format_summary(report, verbose: bool = False, case_lines: bool = True) -> str:
    """The terminal summary: failing cases not in the known-failures list first, then the
    known failures grouped by reason, stale entries, a per-op table and the totals."""
    lines = []
    known = report.known or {}
    if case_lines:
        for o in report.outcomes:
            if o.status == "pass" and not verbose:
                continue
            if o.status != "pass" and o.id in known and not verbose:
                continue
            msg = f": {o.message}" if o.message else ""
            lines.append(f"{o.status.upper()}: {o.id}{msg}")
    failing_ops = [(op, c) for op, c in report.by_op().items() if c["fail"] or c["error"] or c["unsupported"]]
    if failing_ops:
        lines.append("by op (cases using it: pass/fail/error/unsupported):")
        for op, c in failing_ops:
            lines.append(f"  {op:40s} {c['pass']}/{c['fail']}/{c['error']}/{c['unsupported']}")
    bad = [o for o in report.outcomes if report._bad(o)]
    expected = [o for o in bad if o.id in known]
    if expected:
        lines.append(f"{len(expected)} known failure(s), as listed:")
        reasons = Counter(known[o.id] for o in expected)
        for reason, n in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0])):
            lines.append(f"  {n:4d}  {reason}")
    reg = report.regressions()
    if reg:
        what = "not in the known-failures list" if report.known is not None else "no known-failures list given"
        lines.append(f"{len(reg)} unexpected failure(s) ({what}):")
        lines.extend(f"  {o.status.upper()}: {o.id}" + (f": {o.message}" if o.message else "") for o in reg)
    st = report.stale()
    if st:
        lines.append(f"{len(st)} known-failure entr{'y' if len(st) == 1 else 'ies'} now passing "
                     f"or naming no case (remove them):")
        lines.extend(f"  {i}" for i in st)
    c = report.counts()
    tol = sum(1 for o in report.outcomes if category(o) == "tolerance")
    fail_detail = []
    if tol:
        fail_detail.append(f"{tol} beyond tolerance only")
    if report.known is not None:
        fail_detail.append(f"{len(expected)} known, {len(reg)} unexpected")
    fd = f" ({', '.join(fail_detail)})" if fail_detail and bad else ""
    lines.append(f"{report.backend}: {c['pass']} passed, {c['fail']} failed, {c['error']} errors{fd}, "
                 f"{c['unsupported']} unsupported, {len(report.skipped)} skipped "
                 f"({len(report.outcomes)} cases, {report.seconds:.1f} s)")
    return "\n".join(lines)


class Progress:
    """A progress bar on stderr (tqdm) while cases run, when stderr is a terminal; lines
    printed through `write` appear above it. Without a terminal it only writes the lines."""

    def __init__(self, total: int, desc: str = "", enabled: Optional[bool] = None, stream=None,
                 mininterval: float = 0.2):
        self.stream = stream or sys.stderr
        if enabled is None:
            enabled = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.bar = None
        self.counts = Counter()
        if enabled:
            from tqdm import tqdm
            self.bar = tqdm(total=total, desc=desc, unit="case", file=self.stream, dynamic_ncols=True,
                            leave=False, mininterval=mininterval)

    def update(self, outcome) -> None:
        self.counts[outcome.status] += 1
        if self.bar is not None:
            self.bar.update(1)
            c = self.counts
            self.bar.set_postfix_str(f"{c['pass']} pass, {c['fail']} fail, {c['error']} error, "
                                     f"{c['unsupported']} unsupported", refresh=False)

    def write(self, line: str) -> None:
        if self.bar is not None:
            self.bar.write(line, file=sys.stdout)
        else:
            print(line, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
