"""Capability profiles: which op x element type x variant a backend ran correctly in a
conformance run, and the answer to "will this model run correctly on that backend?".

A run writes a profile (`stablehlo-ref conformance ... --profile OUT`, or `write_profile`):
one entry per (op, element type, variant) the cases tested, with its worst outcome, how many
cases passed, and for the others their ids and reasons (the known-failures list's reason when
the case is listed, else the backend's message). `stablehlo-ref validate --profile P MODEL`
(`check_model`) looks up every (op, operand element type) of the model:

- every entry for it passed: supported;
- an entry failed: the model uses an op/type the backend gets wrong in the listed cases
  (with an attribute variant: only when the model's op has that attribute value; a variant
  that names a data condition, such as subnormal inputs, is reported as a condition);
- no entry: not covered by the profile (the suite never ran it on that backend).

Downstream projects keep such allowlists by hand (openxla/stablehlo#69); this one comes from
a run."""
from __future__ import annotations

import json
import re
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from stablehlo_ref.errors import UsageError

from .report import CATEGORY_LABELS, category, known_reason, write_atomically
from .subject import op_subjects

PROFILE_SCHEMA_ID = "stablehlo-ref/capability-profile/1"
_SEVERITY = ("fail", "error", "tolerance", "unsupported", "pass")


def profile_json(reports) -> dict:
    """The profile of one run (or of several runs of the same backend, e.g. shards)."""
    reports = list(reports)
    groups: Dict[Tuple[str, str, str], list] = defaultdict(list)
    for r in reports:
        for o in r.outcomes:
            if o.op:
                groups[(o.op, o.element_type, o.variant)].append((r, o))
    entries = []
    for (op, et, variant), items in sorted(groups.items()):
        cats = {category(o) for _, o in items}
        status = next(c for c in _SEVERITY if c in cats)
        e = {"op": op, "element_type": et, "variant": variant, "status": status,
             "cases": len(items), "passed": sum(1 for _, o in items if o.status == "pass")}
        bad = [(r, o) for r, o in items if o.status != "pass"]
        if bad:
            e["failing"] = [{"id": o.id, "category": category(o),
                             "reason": known_reason(r, o) or o.message or o.status} for r, o in bad]
        entries.append(e)
    names = sorted({r.backend for r in reports})
    return {"schema": PROFILE_SCHEMA_ID, "backend": ", ".join(names),
            "description": "; ".join(sorted({getattr(r, "description", "") or r.backend for r in reports})),
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "cases": sum(len(r.outcomes) for r in reports), "entries": entries}


def write_profile(path: str, reports) -> None:
    write_atomically(path, json.dumps(profile_json(reports), indent=1).encode())


@dataclass
class Profile:
    backend: str
    description: str
    entries: Dict[Tuple[str, str], List[dict]] = field(default_factory=dict)


def load_profile(path: str) -> Profile:
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except OSError as e:
        raise UsageError(f"cannot read profile {path}: {e.strerror}") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise UsageError(f"{path}: not a capability profile (not JSON: {e})") from None
    if not isinstance(doc, dict) or doc.get("schema") != PROFILE_SCHEMA_ID or not isinstance(doc.get("entries"), list):
        raise UsageError(f"{path}: not a capability profile (expected \"schema\": \"{PROFILE_SCHEMA_ID}\" "
                         "and \"entries\"; write one with `stablehlo-ref conformance ... --profile OUT`)")
    p = Profile(str(doc.get("backend", "?")), str(doc.get("description", "")))
    by: Dict[Tuple[str, str], List[dict]] = defaultdict(list)
    for n, e in enumerate(doc["entries"]):
        if not isinstance(e, dict) or not all(isinstance(e.get(k), str) for k in ("op", "element_type", "status")):
            raise UsageError(f"{path}: entry #{n} needs op, element_type and status strings")
        by[(e["op"], e["element_type"])].append(e)
    p.entries = dict(by)
    return p


_ATTR_TOKEN = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.+?)\s*$")


def _variant_applies(variant: str, op) -> Optional[bool]:
    """Whether an entry's attribute variant describes `op`: True/False when the variant is a
    list of `name=value` attributes (compared with the op's printed attributes), None when it
    names a condition on the data (special values, shapes) that only the inputs decide."""
    if not variant:
        return True
    tokens = [t for t in re.split(r"[;,]\s*(?=[A-Za-z_][A-Za-z0-9_]*\s*=)", variant) if t.strip()]
    matched = []
    for t in tokens:
        m = _ATTR_TOKEN.match(t)
        if not m:
            return None
        name, want = m.groups()
        attr = op.attributes.get(name)
        if attr is None:
            return None
        have = str(getattr(attr, "value", attr))
        norm = lambda s: re.sub(r"[\s\"'#]|stablehlo<[a-z_]+|>", "", s).lower()  # noqa: E731
        matched.append(norm(want) in norm(have) or norm(have) in norm(want))
    return all(matched) if matched else None


@dataclass
class Finding:
    op: str
    element_type: str
    status: str             # supported | fails | condition | not covered
    detail: str = ""


def check_model(module, profile: Profile) -> List[Finding]:
    """For each (op, element type) the module uses, what the profile says about it."""
    ops_by_subject = defaultdict(list)
    for op in module.walk():
        ops_by_subject[op.name].append(op)
    out = []
    for name, et in op_subjects(module):
        entries = profile.entries.get((name, et), [])
        if not entries:
            out.append(Finding(name, et, "not covered"))
            continue
        bad = [e for e in entries if e.get("status") != "pass"]
        if not bad:
            out.append(Finding(name, et, "supported"))
            continue
        sure, conditional = [], []
        for e in bad:
            applies = [_variant_applies(e.get("variant", ""), op) for op in ops_by_subject[name]]
            if any(a is True for a in applies):
                sure.append(e)
            elif any(a is None for a in applies):
                conditional.append(e)
        if not sure and not conditional:
            out.append(Finding(name, et, "supported", "failing variants not used"))
            continue
        parts = []
        for e in sure + conditional:
            reasons = []
            for f in e.get("failing", []):
                r = f.get("reason", "")
                if r and r not in reasons:
                    reasons.append(r)
            v = f" [{e['variant']}]" if e.get("variant") else ""
            label = CATEGORY_LABELS.get(e.get("status", ""), e.get("status", ""))
            parts.append(f"{e.get('cases', 0) - e.get('passed', 0)} of {e.get('cases', 0)} case(s){v} "
                         f"failed ({label})" + (f": {'; '.join(reasons[:3])}" if reasons else ""))
        out.append(Finding(name, et, "fails" if sure else "condition", " | ".join(parts)))
    return out


_CACHE: Dict[str, Profile] = {}


def report_model(profile_path: str, module, label: str, out=None) -> int:
    """`validate --profile`: print what the profile says about a valid module; 1 when an
    op/type it uses fails on the backend (or may, under a data condition), else 0."""
    import sys
    out = out or sys.stdout
    p = _CACHE.get(profile_path) or _CACHE.setdefault(profile_path, load_profile(profile_path))
    findings = check_model(module, p)
    bad = [f for f in findings if f.status in ("fails", "condition")]
    uncovered = [f for f in findings if f.status == "not covered"]
    desc = p.description[len(p.backend) + 2:] if p.description.startswith(p.backend + ": ") else p.description
    who = p.backend + (f" ({desc})" if desc and desc != p.backend else "")
    if bad:
        print(f"{label}: will not run correctly on {who}: {len(bad)} of {len(findings)} op/type "
              f"combination(s) fail in the profile's run:", file=out)
        for f in bad:
            when = "" if f.status == "fails" else " (on some inputs)"
            print(f"  {f.op} {f.element_type}{when}: {f.detail}", file=out)
    elif not uncovered:
        print(f"{label}: all supported on {who} ({len(findings)} op/type combination(s))", file=out)
    else:
        print(f"{label}: no known problem on {who}, but {len(uncovered)} of {len(findings)} op/type "
              "combination(s) are not covered by the profile:", file=out)
    if uncovered and bad:
        print(f"  not covered by the profile ({len(uncovered)}):", file=out)
    for f in uncovered:
        print(f"  {f.op} {f.element_type}: not covered", file=out)
    return 1 if bad else 0
