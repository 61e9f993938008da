"""Campaigns: every backend configuration x the suite, run here or on a Dask cluster, and
their results merged into one report; shards for CI matrices; reports read back from JSON.

    reports = run_campaign(["reference", "xla"], cases, scheduler="tcp://10.0.0.5:8786")

Dask distributed schedules the work (`--scheduler ADDRESS`): the cases are split into chunks,
one task per (configuration, chunk); a worker keeps one backend instance per configuration and
thread and reuses it across chunks (an XLA or IREE worker process starts once). The results
come back as the report's JSON records, so a worker needs only this package (and the
backend's own packages), not a shared file system. No scheduler of our own: without
`--scheduler` the configurations run one after another in this process.

`--shard i/n` keeps every n-th case starting at the i-th (1-based), so n CI jobs run disjoint
parts of the suite; `merge_reports` joins their JSON reports into one."""
from __future__ import annotations

import threading
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from stablehlo_ref.errors import UsageError

from .backends import get_backend
from .runner import CaseOutcome, Report, run_case, run_suite


def parse_shard(text: str) -> Tuple[int, int]:
    """`i/n` with 1 <= i <= n -> (i, n)."""
    i, sep, n = (text or "").partition("/")
    try:
        i, n = int(i), int(n)
    except ValueError:
        i = n = 0
    if not sep or n < 1 or not 1 <= i <= n:
        raise UsageError(f"--shard takes i/n with 1 <= i <= n (e.g. 1/4), not {text!r}")
    return i, n


def shard(items: Sequence, i: int, n: int) -> list:
    """The i-th of n disjoint parts (1-based): every n-th item starting at item i."""
    return list(items[i - 1::n])


# ------------------------------------------------------------------ reading reports back

def outcome_from_json(d: dict) -> CaseOutcome:
    return CaseOutcome(id=d["id"], status=d["status"], message=d.get("message", ""),
                       mismatch=d.get("mismatch"), stage=d.get("stage", ""),
                       seconds=float(d.get("seconds", 0.0)), ops=tuple(d.get("ops", ())),
                       op=d.get("op", ""), element_type=d.get("element_type", ""),
                       variant=d.get("variant", ""), max_abs_error=d.get("max_abs_error"),
                       max_ulp_error=d.get("max_ulp_error"),
                       tolerance_exceeded=bool(d.get("tolerance_exceeded", False)))


def report_from_json(d: dict) -> Report:
    """A Report from a report document; its known-failures list is rebuilt from the cases'
    `known_failure` reasons (entries naming no case of the run are not in the document)."""
    known = None
    if "known_failures" in d:
        known = {c["id"]: c["known_failure"] for c in d["cases"] if c.get("known_failure")}
    return Report(d["backend"], outcomes=[outcome_from_json(c) for c in d["cases"]],
                  skipped=[(s["id"], s["reason"]) for s in d.get("skipped", [])],
                  seconds=float(d.get("seconds", 0.0)), strict=bool(d.get("strict", False)),
                  known=known, complete=False, description=d.get("description", ""))


def reports_from_json(doc: dict) -> List[Report]:
    """The runs of a report or campaign document (validated against the schema first)."""
    from .report import CAMPAIGN_SCHEMA_ID, validate_json
    try:
        validate_json(doc)
    except Exception as e:      # noqa: BLE001 - jsonschema.ValidationError and friends
        msg = getattr(e, "message", str(e)).splitlines()[0]
        raise UsageError(f"not a conformance report: {msg}") from None
    if doc.get("schema") == CAMPAIGN_SCHEMA_ID:
        return [report_from_json(r) for r in doc["runs"]]
    return [report_from_json(doc)]


def merge_reports(reports: Iterable[Report]) -> List[Report]:
    """Reports of the same backend (shards, or chunks of a campaign) joined into one per
    backend, cases in id order; reports of different backends stay apart, in first-seen order."""
    by_backend: Dict[str, List[Report]] = {}
    for r in reports:
        by_backend.setdefault(r.backend, []).append(r)
    out = []
    for name, rs in by_backend.items():
        if len(rs) == 1:
            out.append(rs[0])
            continue
        seen: Dict[str, CaseOutcome] = {}
        for r in rs:
            for o in r.outcomes:
                seen.setdefault(o.id, o)
        known = None
        if any(r.known is not None for r in rs):
            known = {}
            for r in rs:
                known.update(r.known or {})
        out.append(Report(name, outcomes=[seen[k] for k in sorted(seen)],
                          skipped=sorted({s for r in rs for s in r.skipped}),
                          seconds=max(r.seconds for r in rs), strict=any(r.strict for r in rs),
                          known=known, complete=False,
                          description=next((r.description for r in rs if r.description), "")))
    return out


# ---------------------------------------------------------------------------- campaigns

_local = threading.local()


def _worker_backend(config: str, extra_ulps: int):
    """This worker thread's backend for a configuration (created once, reused by chunks)."""
    cache = getattr(_local, "backends", None)
    if cache is None:
        cache = _local.backends = {}
    key = (config, extra_ulps)
    if key not in cache:
        b = get_backend(config, extra_ulps=extra_ulps)
        ok, why = b.available()
        cache[key] = (b, None if ok else why)
    return cache[key]


def run_chunk(config: str, extra_ulps: int, cases: list, timeout: Optional[float]) -> dict:
    """One Dask task: a chunk of cases on one configuration, as JSON-able records."""
    import time
    b, why = _worker_backend(config, extra_ulps)
    if why is not None:
        return {"unavailable": why}
    t0 = time.perf_counter()
    outcomes = [run_case(b, c, timeout).to_json() for c in cases]
    return {"outcomes": outcomes, "name": b.name, "description": b.describe(),
            "seconds": time.perf_counter() - t0}


def _chunks(cases: Sequence, size: int) -> List[list]:
    return [list(cases[k:k + size]) for k in range(0, len(cases), size)]


def run_campaign(configs: Sequence[str], cases: Sequence, *, scheduler=None, timeout: Optional[float] = 60.0,
                 extra_ulps: int = 0, known: Optional[Dict[str, Optional[Dict[str, str]]]] = None,
                 strict: bool = False, skipped: Sequence[tuple] = (), complete: bool = True,
                 chunk_size: int = 25, progress=None, jobs: int = 1) -> List[Report]:
    """Run `cases` on every backend configuration; one Report per configuration, cases in
    the given order. `scheduler`: a Dask scheduler address or a `distributed.Client` (None:
    run here, one configuration after another). `known`: configuration -> known-failures.
    `progress(configuration, outcome)` sees each outcome as it comes in."""
    known = known or {}
    if scheduler is None:
        reports = []
        for config in configs:
            b = get_backend(config, extra_ulps=extra_ulps)
            try:
                ok, why = b.available()
                if not ok:
                    raise UsageError(f"backend {config} is unavailable: {why}")
                each = (lambda o, c=config: progress(c, o)) if progress is not None else None
                reports.append(run_suite(b, cases, timeout=timeout, known=known.get(config), strict=strict,
                                         skipped=skipped, complete=complete, progress=each, jobs=jobs))
            finally:
                b.close()
        return reports
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise UsageError("--scheduler needs Dask distributed (pip install 'dask[distributed]', "
                         "or the project's `campaign` extra)") from None
    own = not isinstance(scheduler, Client)
    if own:
        try:
            client = Client(scheduler, timeout=30)
        except (OSError, TimeoutError) as e:
            raise UsageError(f"cannot reach the Dask scheduler at {scheduler}: {e}") from None
    else:
        client = scheduler
    try:
        chunks = _chunks(list(cases), max(1, int(chunk_size)))
        futures = {}
        for config in configs:
            get_backend(config)           # an unknown name is a usage error before any work
            for k, chunk in enumerate(chunks):
                f = client.submit(run_chunk, config, int(extra_ulps), chunk, timeout, pure=False,
                                  key=f"stablehlo-conformance-{config}-{k}-{id(chunks)}")
                futures[f] = (config, k)
        results: Dict[Tuple[str, int], dict] = {}
        for f in as_completed(list(futures)):
            res = f.result()
            results[futures[f]] = res
            if progress is not None:
                for d in res.get("outcomes", []):
                    progress(futures[f][0], outcome_from_json(d))
        reports = []
        for config in configs:
            parts = [results[(config, k)] for k in range(len(chunks))]
            why = next((p["unavailable"] for p in parts if "unavailable" in p), None)
            if why is not None:
                raise UsageError(f"backend {config} is unavailable on the Dask workers: {why}")
            rep = Report(parts[0].get("name", config) if parts else config, outcomes=[outcome_from_json(d) for p in parts for d in p["outcomes"]],
                         skipped=list(skipped), strict=strict, known=known.get(config), complete=complete,
                         description=next((p["description"] for p in parts if p.get("description")), ""),
                         seconds=sum(p["seconds"] for p in parts))
            reports.append(rep)
        return reports
    finally:
        if own:
            client.close()


def write_outputs(reports: Sequence[Report], json_path: Optional[str] = None, html_path: Optional[str] = None,
                  junit_path: Optional[str] = None, profile_path: Optional[str] = None) -> None:
    """The report files of a run or campaign, each written whole or not at all. One run
    gives a report document, several a campaign document (JSON), one HTML file with a matrix
    per run, one JUnit document with a testsuite per run; the profile covers one backend."""
    import json
    from .report import campaign_json, report_json, write_atomically
    if profile_path:
        names = {r.backend for r in reports}
        if len(names) != 1:
            raise UsageError(f"--profile describes one backend; this run has {len(names)} ({', '.join(sorted(names))})")
    if json_path:
        doc = report_json(reports[0]) if len(reports) == 1 else campaign_json(reports)
        write_atomically(json_path, json.dumps(doc, indent=1).encode())
    if html_path:
        from .html_report import html_report
        write_atomically(html_path, html_report(reports).encode("utf-8"))
    if junit_path:
        from .junit import junit_xml
        write_atomically(junit_path, junit_xml(reports))
    if profile_path:
        from .profile import write_profile
        write_profile(profile_path, reports)
