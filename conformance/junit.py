"""JUnit XML of conformance runs, in the dialect CI systems read (Jenkins, GitLab, GitHub
actions that publish test results, Azure Pipelines): `<testsuites>` with one `<testsuite>` per
backend run, one `<testcase>` per case with the op under test as `classname` (so results group
by op) and the case id as `name`.

- a failing case not in the known-failures list: `<failure>` (wrong result) or `<error>`
  (compile/run error, timeout, crash), with the message and the mismatch as text;
- a known failure (listed, failing as listed): `<skipped>` with the list's reason (JUnit
  has no xfail; pytest writes xfails the same way);
- a listed case that now passes: `<failure>` ("listed as a known failure but passes");
- unsupported: `<skipped>` (a `<failure>` with `--strict`)."""
from __future__ import annotations

import re
import socket
import time
import xml.etree.ElementTree as ET
from typing import Sequence

from .report import category, known_reason, verdict


_NOT_XML = re.compile("[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _clean(s: str) -> str:
    """Text without the characters XML 1.0 cannot carry (a backend's message may hold any)."""
    return _NOT_XML.sub("\ufffd", s)


def _classname(o) -> str:
    return o.op or (o.ops[0] if o.ops else "(none)")


def _text(o) -> str:
    lines = [o.message] if o.message else []
    if o.mismatch:
        for k in ("label", "index", "actual", "expected", "ulp", "count", "size", "rule", "expected_from"):
            if k in o.mismatch:
                lines.append(f"{k}: {o.mismatch[k]}")
    for k, v in (("element type", o.element_type), ("variant", o.variant),
                 ("max abs error", o.max_abs_error), ("max ULP error", o.max_ulp_error)):
        if v not in ("", None):
            lines.append(f"{k}: {v}")
    return _clean("\n".join(lines))


def testsuite(report) -> ET.Element:
    outcomes = report.outcomes
    failures = errors = skipped = 0
    suite = ET.Element("testsuite")
    for o in outcomes:
        tc = ET.SubElement(suite, "testcase", classname=_classname(o), name=o.id, time=f"{o.seconds:.4f}")
        reason = known_reason(report, o)
        v = verdict(report, o)
        bad = report._bad(o)
        if not bad and v == "unexpected":        # a listed case that passes: the list must shrink
            failures += 1
            ET.SubElement(tc, "failure", message=f"listed as a known failure but passes ({reason})",
                          type="stale-known-failure")
        elif bad and v == "expected":
            skipped += 1
            ET.SubElement(tc, "skipped", message=_clean(f"known failure: {reason}")).text = _text(o)
        elif o.status == "unsupported" and not bad:
            skipped += 1
            ET.SubElement(tc, "skipped", message=_clean(f"unsupported: {o.message}"))
        elif o.status in ("fail", "unsupported"):
            failures += 1
            kind = {"tolerance": "tolerance-exceeded", "unsupported": "unsupported"}.get(category(o), "wrong-result")
            ET.SubElement(tc, "failure", message=_clean(o.message or o.status), type=kind).text = _text(o)
        elif o.status == "error":
            errors += 1
            ET.SubElement(tc, "error", message=_clean(o.message or "error"), type=o.stage or "error").text = _text(o)
        if o.element_type or o.variant:
            props = ET.SubElement(tc, "properties")
            for k, val in (("element_type", o.element_type), ("variant", o.variant)):
                if val:
                    ET.SubElement(props, "property", name=k, value=val)
    for sid, why in report.skipped:
        tc = ET.SubElement(suite, "testcase", classname="(not extractable)", name=sid, time="0")
        ET.SubElement(tc, "skipped", message=_clean(why))
        skipped += 1
    suite.set("name", f"stablehlo-conformance.{report.backend}")
    suite.set("tests", str(len(outcomes) + len(report.skipped)))
    suite.set("failures", str(failures))
    suite.set("errors", str(errors))
    suite.set("skipped", str(skipped))
    suite.set("time", f"{report.seconds:.3f}")
    suite.set("timestamp", time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()))
    suite.set("hostname", socket.gethostname() or "localhost")
    # properties go first inside a testsuite (the JUnit schema's order)
    props = ET.Element("properties")
    for k, val in (("backend", report.backend), ("description", getattr(report, "description", "") or report.backend)):
        ET.SubElement(props, "property", name=k, value=val)
    suite.insert(0, props)
    return suite


def junit_xml(reports: Sequence) -> bytes:
    """One JUnit document for one or more runs."""
    root = ET.Element("testsuites", name="stablehlo-ref conformance")
    totals = dict(tests=0, failures=0, errors=0, skipped=0)
    secs = 0.0
    for r in reports:
        s = testsuite(r)
        root.append(s)
        for k in totals:
            totals[k] += int(s.get(k))
        secs += float(s.get("time"))
    for k, v in totals.items():
        root.set(k, str(v))
    root.set("time", f"{secs:.3f}")
    ET.indent(root)
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="utf-8")
