"""Running cases on a backend, and the report: status per case (pass | fail | error |
unsupported), a summary by op, a known-failures verdict, JSON."""
from __future__ import annotations

import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Sequence

from stablehlo_ref.errors import UsageError

from .backends import Backend, BackendError, BackendUnsupported
from .cases import Case
from .compare import compare_case, describe_mismatch, error_stats
from .report import FLAKY, format_summary, is_flaky, report_json  # noqa: F401 - FLAKY/is_flaky re-exported
from .subject import case_subject

STATUSES = ("pass", "fail", "error", "unsupported")


@dataclass
class CaseOutcome:
    id: str
    status: str
    message: str = ""
    mismatch: Optional[dict] = None
    stage: str = ""
    seconds: float = 0.0
    ops: tuple = ()
    op: str = ""                 # what the case tests (subject.case_subject: the case's own
    element_type: str = ""       # when it names them, else derived from its program)
    variant: str = ""
    max_abs_error: Optional[float] = None     # over all outputs (compare.error_stats)
    max_ulp_error: Optional[int] = None
    tolerance_exceeded: bool = False          # a fail by precision: every differing float
                                              # finite and within 1% (TOLERANCE_CATEGORY_MAX_REL)

    @property
    def first_index(self) -> Optional[list]:
        return list(self.mismatch["index"]) if self.mismatch and "index" in self.mismatch else None

    def to_json(self):
        d = {"id": self.id, "status": self.status, "seconds": round(self.seconds, 4), "ops": list(self.ops)}
        for k in ("op", "element_type", "variant"):
            if getattr(self, k):
                d[k] = getattr(self, k)
        d["max_abs_error"] = self.max_abs_error
        d["max_ulp_error"] = self.max_ulp_error
        d["first_index"] = self.first_index
        if self.tolerance_exceeded:
            d["tolerance_exceeded"] = True
        if self.message:
            d["message"] = self.message
        if self.stage:
            d["stage"] = self.stage
        if self.mismatch:
            d["mismatch"] = self.mismatch
        return d


# the largest relative error of a failing case that reports call "tolerance exceeded"
TOLERANCE_CATEGORY_MAX_REL = 0.01


def run_case(backend: Backend, case: Case, timeout: Optional[float] = None) -> CaseOutcome:
    t0 = time.perf_counter()
    op, et, variant = case_subject(case)
    what = dict(ops=case.ops, op=op, element_type=et, variant=variant)
    try:
        if case.infeed:
            outs = backend.run_infeed(case.program, case.inputs, case.infeed, case.num_replicas,
                                      case.num_partitions, timeout=timeout)
        elif case.num_replicas * case.num_partitions != 1:
            outs = backend.run_processes(case.program, case.inputs, case.num_replicas, case.num_partitions,
                                         timeout=timeout)
        else:
            outs = backend.run(case.program, case.inputs, timeout=timeout)
    except BackendUnsupported as e:
        return CaseOutcome(case.id, "unsupported", str(e), stage="unsupported",
                           seconds=time.perf_counter() - t0, **what)
    except BackendError as e:
        return CaseOutcome(case.id, "error", str(e), stage=e.stage, seconds=time.perf_counter() - t0, **what)
    except Exception as e:      # noqa: BLE001 - a plug-in backend's bug is that case's error, not the run's end
        first = (str(e).strip().splitlines() or [""])[0]
        return CaseOutcome(case.id, "error", f"backend raised {type(e).__name__}: {first}".rstrip(": "),
                           stage="crash", seconds=time.perf_counter() - t0, **what)
    dt = time.perf_counter() - t0
    m = compare_case(case, outs, backend.extra_ulps, backend.atol_scale)
    stats = error_stats(case, outs)
    what.update(max_abs_error=stats["max_abs"], max_ulp_error=stats["max_ulp"])
    if m is None:
        return CaseOutcome(case.id, "pass", seconds=dt, **what)
    # a precision problem, not a wrong result: float outputs outside their tolerance, but
    # every differing element finite and within 1% of the expected value (compare_output
    # gives floats a ULP distance; exact outputs have rule "exact")
    by_distance = ("ulp" in m and m.get("rule") != "exact" and stats["nonfinite"] == 0
                   and stats["max_rel"] <= TOLERANCE_CATEGORY_MAX_REL)
    return CaseOutcome(case.id, "fail", describe_mismatch(m), mismatch=m, seconds=dt,
                       tolerance_exceeded=by_distance, **what)


def load_known_failures(path: str) -> Dict[str, str]:
    """`case-id<TAB>reason` per line; blank lines and `#` comments ignored. Every entry needs
    a reason; a reason starting with `flaky:` allows the case to pass or fail."""
    out = {}
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise UsageError(f"cannot read known-failures file {path}: {e.strerror}") from None
    for n, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, _, reason = line.partition("\t")
        if not reason.strip():
            raise UsageError(f"{path}:{n}: entry {key.strip()!r} has no reason (case-id<TAB>reason)")
        out[key.strip()] = reason.strip()
    return out


@dataclass
class Report:
    backend: str
    outcomes: List[CaseOutcome] = field(default_factory=list)
    skipped: List[tuple] = field(default_factory=list)      # (id, reason): not extractable
    seconds: float = 0.0
    strict: bool = False
    known: Optional[Dict[str, str]] = None
    complete: bool = True           # False when the run was filtered (missing ids can't be judged)
    description: str = ""           # the backend's own description (device, version)

    def counts(self) -> Dict[str, int]:
        c = Counter(o.status for o in self.outcomes)
        return {s: c.get(s, 0) for s in STATUSES}

    def by_op(self) -> Dict[str, Dict[str, int]]:
        table: Dict[str, Counter] = defaultdict(Counter)
        for o in self.outcomes:
            for op in o.ops or ("(none)",):
                table[op][o.status] += 1
        return {op: {s: c.get(s, 0) for s in STATUSES} for op, c in sorted(table.items())}

    def _bad(self, o: CaseOutcome) -> bool:
        return o.status in ("fail", "error") or (self.strict and o.status == "unsupported")

    def regressions(self) -> List[CaseOutcome]:
        """Failing cases not pinned in the known-failures list (all failing cases without one)."""
        known = self.known or {}
        return [o for o in self.outcomes if self._bad(o) and o.id not in known]

    def stale(self) -> List[str]:
        """Known-failure entries that no longer fail (now passing, or naming no case)."""
        if self.known is None:
            return []
        out = [o.id for o in self.outcomes
               if o.id in self.known and not self._bad(o) and not is_flaky(self.known[o.id])]
        if self.complete:
            # an entry naming a case that its file (one this run read) no longer has; entries
            # of files not in this run (another corpus, a held-back file) are not judged
            seen = {o.id for o in self.outcomes} | {i for i, _ in self.skipped}
            files = {i.split("#", 1)[0] for i in seen}
            out.extend(k for k in self.known if k not in seen and k.split("#", 1)[0] in files)
        return out

    @property
    def ok(self) -> bool:
        return not self.regressions() and not self.stale()

    def to_json(self) -> dict:
        """The JSON document of the run (see report.py and report.schema.json)."""
        return report_json(self)

    def format(self, verbose: bool = False) -> str:
        """The terminal summary: case lines, known and unexpected failures apart (report.py)."""
        return format_summary(self, verbose)


def run_suite(backend: Backend, cases: Sequence[Case], timeout: Optional[float] = 60.0,
              known: Optional[Dict[str, str]] = None, strict: bool = False,
              skipped: Sequence[tuple] = (), complete: bool = True,
              progress: Optional[Callable[[CaseOutcome], None]] = None, jobs: int = 1) -> Report:
    """Run `cases` on `backend`. With `jobs` > 1, cases run concurrently on that many
    instances of the backend (`backend.clone()`: worker backends start one process each;
    the clones are closed at the end, `backend` itself is left to its owner). Outcomes are
    in case order either way; `progress` sees each outcome as it finishes (in any order
    with jobs)."""
    rep = Report(backend.name, strict=strict, known=known, skipped=list(skipped), complete=complete)
    t0 = time.perf_counter()
    jobs = max(1, min(int(jobs), len(cases)))
    if jobs == 1:
        for case in cases:
            o = run_case(backend, case, timeout)
            rep.outcomes.append(o)
            if progress is not None:
                progress(o)
    else:
        import queue
        import threading
        from concurrent.futures import ThreadPoolExecutor
        pool: "queue.Queue[Backend]" = queue.Queue()
        clones = [backend.clone() for _ in range(jobs - 1)]
        for b in [backend] + clones:
            pool.put(b)
        lock = threading.Lock()

        def one(case):
            b = pool.get()
            try:
                o = run_case(b, case, timeout)
            finally:
                pool.put(b)
            if progress is not None:
                with lock:
                    progress(o)
            return o
        try:
            with ThreadPoolExecutor(max_workers=jobs) as ex:
                rep.outcomes.extend(ex.map(one, cases))
        finally:
            for c in clones:
                if c is not backend:
                    c.close()
    rep.seconds = time.perf_counter() - t0
    rep.description = backend.describe()
    return rep
