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
from .compare import compare_case, describe_mismatch

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
    op: str = ""                 # copied from the case (generated cases say what they test)
    element_type: str = ""
    variant: str = ""

    def to_json(self):
        d = {"id": self.id, "status": self.status, "seconds": round(self.seconds, 4), "ops": list(self.ops)}
        for k in ("op", "element_type", "variant"):
            if getattr(self, k):
                d[k] = getattr(self, k)
        if self.message:
            d["message"] = self.message
        if self.stage:
            d["stage"] = self.stage
        if self.mismatch:
            d["mismatch"] = self.mismatch
        return d


def run_case(backend: Backend, case: Case, timeout: Optional[float] = None) -> CaseOutcome:
    t0 = time.perf_counter()
    what = dict(ops=case.ops, op=case.op, element_type=case.element_type, variant=case.variant)
    try:
        outs = backend.run(case.program, case.inputs, timeout=timeout)
    except BackendUnsupported as e:
        return CaseOutcome(case.id, "unsupported", str(e), stage="unsupported",
                           seconds=time.perf_counter() - t0, **what)
    except BackendError as e:
        return CaseOutcome(case.id, "error", str(e), stage=e.stage, seconds=time.perf_counter() - t0, **what)
    dt = time.perf_counter() - t0
    m = compare_case(case, outs, backend.extra_ulps, backend.atol_scale)
    if m is None:
        return CaseOutcome(case.id, "pass", seconds=dt, **what)
    return CaseOutcome(case.id, "fail", describe_mismatch(m), mismatch=m, seconds=dt, **what)


FLAKY = "flaky:"


def is_flaky(reason: str) -> bool:
    """A known-failure entry whose reason starts with `flaky:` pins a case whose outcome
    depends on the host (CPU features such as flush-to-zero or FMA, seen on machines of the
    same kind): it may pass or fail, and passing does not make it stale."""
    return reason.startswith(FLAKY)


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
        d = {"backend": self.backend, "seconds": round(self.seconds, 3), "strict": self.strict,
             "ok": self.ok, "summary": {**self.counts(), "skipped": len(self.skipped)},
             "by_op": self.by_op(), "cases": [o.to_json() for o in self.outcomes],
             "skipped": [{"id": i, "reason": r} for i, r in self.skipped]}
        if self.known is not None:
            d["known_failures"] = {"listed": len(self.known),
                                   "unexpected": [o.id for o in self.regressions()],
                                   "stale": self.stale()}
        return d

    def format(self, verbose: bool = False) -> str:
        lines = []
        known = self.known or {}
        for o in self.outcomes:
            if o.status == "pass" and not verbose:
                continue
            if o.status != "pass" and o.id in known and not verbose:
                continue
            msg = f": {o.message}" if o.message else ""
            lines.append(f"{o.status.upper()}: {o.id}{msg}")
        failing_ops = [(op, c) for op, c in self.by_op().items() if c["fail"] or c["error"] or c["unsupported"]]
        if failing_ops:
            lines.append("by op (cases using it: pass/fail/error/unsupported):")
            for op, c in failing_ops:
                lines.append(f"  {op:40s} {c['pass']}/{c['fail']}/{c['error']}/{c['unsupported']}")
        if self.known is not None:
            reg = self.regressions()
            st = self.stale()
            if reg:
                lines.append(f"{len(reg)} unexpected failure(s) (not in the known-failures list):")
                lines.extend(f"  {o.id}" for o in reg)
            if st:
                lines.append(f"{len(st)} known-failure entr{'y' if len(st) == 1 else 'ies'} now passing "
                             f"or naming no case (remove them):")
                lines.extend(f"  {i}" for i in st)
        c = self.counts()
        lines.append(f"{self.backend}: {c['pass']} passed, {c['fail']} failed, {c['error']} errors, "
                     f"{c['unsupported']} unsupported, {len(self.skipped)} skipped "
                     f"({len(self.outcomes)} cases, {self.seconds:.1f} s)")
        return "\n".join(lines)


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
    return rep
