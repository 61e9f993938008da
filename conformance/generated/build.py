"""Turning oracle results into `Case`s: ids, programs, arrays, rules, provenance."""
from __future__ import annotations

import math
from typing import List, Optional, Sequence

import numpy as np

from ..cases import Case, Rule, process_labels
from .formats import UNSPECIFIED
from .values import SEED, kind, make_array

PREFIX = "generated"


def case_id(op: str, et: str, variant: str) -> str:
    return f"{PREFIX}/{op}/{et}/{variant}"


def rule_for(et: str, ulp: int) -> Rule:
    if kind(et) in ("float", "complex") and ulp:
        return Rule("ulp", max_ulp=ulp, check="generated")
    return Rule("exact", check="generated")


def make_case(op: str, et: str, variant: str, program: str, inputs: Sequence[np.ndarray],
              expected: Sequence[np.ndarray], out_ets: Sequence[str], rules: Sequence[Rule],
              oracle: str, module: str, note: str = "", ops: Sequence[str] = (),
              num_replicas: int = 1, num_partitions: int = 1) -> Case:
    """A generated case; with a process grid (num_replicas x num_partitions > 1), `inputs` and
    `expected` (and `out_ets`, `rules`) hold every process's values in process order."""
    cid = case_id(op, et, variant)
    prov = f"stablehlo_ref.conformance.generated.{module} (seed {SEED}, key {cid})"
    if note:
        prov += f"; {note}"
    return Case(cid, program, list(inputs), list(expected), list(out_ets), list(rules),
                labels=process_labels(len(expected) // (num_replicas * num_partitions), num_replicas, num_partitions),
                expected_from=["oracle"] * len(expected),
                ops=tuple(ops) or (op,), op=op, element_type=et, variant=variant, oracle=oracle,
                provenance=prov, num_replicas=num_replicas, num_partitions=num_partitions)


def keep_specified(rows: List[tuple]) -> List[tuple]:
    """(args, expected) rows whose expected value the spec fixes."""
    return [r for r in rows if r[1] is not UNSPECIFIED]
