"""Generated cases of the collective ops (all_gather, all_reduce, all_to_all, reduce_scatter,
collective_permute, collective_broadcast, collective_reduce, the legacy cross-replica-sum),
async_start/async_done around a collective, send/recv paired inside one program, and the
token ops (after_all, create_token, outfeed) and infeed (values the host feeds, `Case.infeed`).

A collective case is one SPMD program `@main` run by every process of a `num_replicas x
num_partitions` grid (`Case.num_replicas`/`num_partitions`); each process gets its own
inputs and has its own expected results. The oracle is the spec's definition written out:
the process groups (`cross_replica`, `cross_partition`, `cross_replica_and_partition`,
`flattened_ids` of the spec's "Collective ops" section) as plain loops, then concatenation,
splitting, routing or a reduction over each group's operands by index arithmetic. Reductions
use values whose combination is exact in every order (the spec leaves the schedule
implementation-defined): integers wrap (any order gives the same), floats are small
integers whose every partial sum is representable, max/min need nothing."""
from __future__ import annotations

import itertools
import math
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from .build import make_case, rule_for
from .formats import float_format, round_value
from .oracles import wrap
from .program import ProgramBuilder, tensor
from .values import admitted, bits, component, float_random, float_specials, int_range, kind, make_array, rng_for

MODULE = "collectives"
ORACLE = "index-arithmetic"
REDUCE_NOTE = ("the reduction schedule is implementation-defined: values chosen so that every "
               "order gives the same result")

Process = Tuple[int, int]


# ------------------------------------------------------------------ process groups (spec)
def process_groups(mode: str, groups: Sequence[Sequence[int]], num_replicas: int,
                   num_partitions: int) -> List[List[Process]]:
    """The spec's process-group strategies (section "Collective ops"), as lists of
    (replica_id, partition_id) in group order."""
    out: List[List[Process]] = []
    if mode == "cross_replica":
        for g in groups:
            for p in range(num_partitions):
                out.append([(r, p) for r in g])
    elif mode == "cross_partition":
        for g in groups:
            for r in range(num_replicas):
                out.append([(r, p) for p in g])
    elif mode == "cross_replica_and_partition":
        for g in groups:
            grp = []
            for p in range(num_partitions):
                for r in g:
                    grp.append((r, p))
            out.append(grp)
    elif mode == "flattened_ids":
        for g in groups:
            out.append([(i // num_partitions, i % num_partitions) for i in g])
    else:
        raise ValueError(f"unknown process-group strategy {mode!r}")
    for g in out:
        for r, p in g:
            if not (0 <= r < num_replicas and 0 <= p < num_partitions):
                raise ValueError(f"process ({r}, {p}) is outside the {num_replicas}x{num_partitions} grid")
    return out


def reduce_mode(channel: int, use_global: bool) -> str:
    """all_gather / all_reduce / reduce_scatter / collective_reduce."""
    if use_global:
        if channel <= 0:
            raise ValueError("use_global_device_ids needs channel_id > 0")
        return "flattened_ids"
    return "cross_replica" if channel <= 0 else "cross_replica_and_partition"


def cross_mode(channel: int) -> str:
    """all_to_all / collective_permute / collective_broadcast."""
    return "cross_replica" if channel <= 0 else "cross_partition"


def processes(num_replicas: int, num_partitions: int) -> List[Process]:
    return [(r, p) for r in range(num_replicas) for p in range(num_partitions)]


def group_of(groups: List[List[Process]], me: Process) -> Optional[List[Process]]:
    found = [g for g in groups if me in g]
    if len(found) > 1:
        raise ValueError(f"process {me} is in more than one group")
    return found[0] if found else None


# ------------------------------------------------------------------ oracles
def oracle_all_gather(xs: Dict[Process, List[np.ndarray]], groups, dim: int) -> Dict[Process, List[np.ndarray]]:
    out = {}
    for me in xs:
        g = group_of(groups, me)
        if g is None:
            raise ValueError(f"all_gather: process {me} is in no group")
        out[me] = [np.concatenate([xs[s][j] for s in g], axis=dim) for j in range(len(xs[me]))]
    return out


def _split(a: np.ndarray, count: int, dim: int, k: int) -> np.ndarray:
    n = a.shape[dim]
    if n % count:
        raise ValueError(f"dimension {dim} of size {n} does not split into {count}")
    size = n // count
    idx = [slice(None)] * a.ndim
    idx[dim] = slice(k * size, (k + 1) * size)
    return a[tuple(idx)]


def oracle_all_to_all(xs, groups, split_dim: int, concat_dim: int, count: int):
    out = {}
    for me in xs:
        g = group_of(groups, me)
        if g is None:
            raise ValueError(f"all_to_all: process {me} is in no group")
        k = g.index(me)
        out[me] = [np.concatenate([_split(xs[s][j], count, split_dim, k) for s in g], axis=concat_dim)
                   for j in range(len(xs[me]))]
    return out


def oracle_permute(xs, groups_of_pairs, zero: np.ndarray):
    """collective_permute: the pairs mapped through the strategy are [source, target]."""
    out = {me: zero.copy() for me in xs}
    for src, dst in groups_of_pairs:
        out[dst] = xs[src].copy()
    return out


def oracle_broadcast(xs, groups, roots: Sequence[int], zeros: Sequence[np.ndarray]):
    """collective_broadcast: result j of a process in a group is operand j of the group's
    `roots[j]`-th process; processes in no group get zeros."""
    out = {}
    for me in xs:
        g = group_of(groups, me)
        out[me] = [zeros[j].copy() if g is None else xs[g[roots[j]]][j].copy() for j in range(len(zeros))]
    return out


def combine(body: str, et: str, a, b):
    """One application of a reduction body to two Python values of element type `et`."""
    k = kind(et)
    signed = k == "signed"
    if k == "bool":
        return {"add": a or b, "or": a or b, "max": a or b, "mul": a and b, "and": a and b, "min": a and b}[body]
    if body == "add":
        return wrap(a + b, bits(et), signed) if k in ("signed", "unsigned") else a + b
    if body == "mul":
        return wrap(a * b, bits(et), signed) if k in ("signed", "unsigned") else a * b
    if body == "max":
        return max(a, b)
    if body == "min":
        return min(a, b)
    if body == "and":
        return wrap(a & b, bits(et), signed)
    if body == "or":
        return wrap(a | b, bits(et), signed)
    raise ValueError(f"unknown body {body!r}")


def reduce_values(body: str, et: str, values: Sequence[list]) -> list:
    """Element-wise reduction of equally long value lists, left to right (every order gives
    the same result for the values this module uses)."""
    acc = list(values[0])
    for v in values[1:]:
        acc = [combine(body, et, a, b) for a, b in zip(acc, v)]
    return acc


# ------------------------------------------------------------------ values
def _types(op: str, fast, kinds=("bool", "signed", "unsigned", "float", "complex")) -> List[str]:
    from stablehlo_ref import spec
    cls = spec.op(op).operands[0].type
    return [t for t in admitted(cls) if kind(t) in kinds and (fast is None or t in fast)]


def move_values(et: str, n: int, seed: int) -> list:
    """n values of `et` for movement ops (any value moves exactly): special values and
    moderate random ones, spread over the processes by `seed`."""
    k = kind(et)
    if k == "bool":
        return [(i * 7 + seed) % 3 == 0 for i in range(n)]
    if k in ("signed", "unsigned"):
        lo, hi = int_range(et)
        return [lo + ((i * 37 + seed * 53 + 5) % (hi - lo + 1)) for i in range(n)]
    fmt = float_format(component(et) if k == "complex" else et)
    pool = float_specials(fmt) + float_random(fmt, rng_for(f"{MODULE}/{et}"), 12, moderate=True)
    vals = [pool[(i * 5 + seed * 3) % len(pool)] for i in range(2 * n)]
    if k == "complex":
        return [complex(vals[2 * i], vals[2 * i + 1]) for i in range(n)]
    return vals[:n]


def reduce_value_set(et: str, body: str, nproc: int) -> Optional[Tuple[int, int]]:
    """(lo, hi) of small integers such that combining `nproc` of them with `body` is exact in
    the float format in every order; None when no such range exists (then the body is left
    out for the type). Integer and boolean types need none (None is not returned for them)."""
    k = kind(et)
    if k not in ("float", "complex"):
        return (0, 0)
    if not has_zero(et):
        # f8E8M0FNU holds only powers of two: max / min / mul of 2^-2..2^2 are exact (the
        # range is then of exponents, see reduce_inputs); sums are not
        return (-2, 2) if body in ("max", "min", "mul") else None
    fmt = float_format(component(et) if k == "complex" else et)
    for m in (2, 1):
        lo = 0 if fmt.unsigned else -m
        if body in ("max", "min"):
            rng = range(lo, m + 1)
        elif body == "add":
            rng = range(lo * nproc, m * nproc + 1)
        else:                     # mul: every partial product
            rng = sorted({math.prod(c) for n in range(1, nproc + 1) for c in itertools.product(range(lo, m + 1), repeat=n)})
        if fmt.unsigned and body != "max" and body != "min":
            return None
        if all(round_value(float(v), fmt) == v for v in rng):
            return (lo, m)
    return None


def reduce_inputs(et: str, n: int, seed: int, rng: Tuple[int, int]) -> list:
    k = kind(et)
    if k in ("bool", "signed", "unsigned"):
        return move_values(et, n, seed)
    lo, hi = rng
    span = hi - lo + 1
    if not has_zero(et):
        return [2.0 ** (lo + (i * 3 + seed * 7) % span) for i in range(n)]       # exponents lo..hi
    vals = [float(lo + (i * 3 + seed * 7) % span) for i in range(2 * n)]
    if k == "complex":
        return [complex(vals[2 * i], vals[(2 * i + 5) % len(vals)]) for i in range(n)]
    return vals[:n]


def zero_of(et: str):
    return {"bool": False, "signed": 0, "unsigned": 0}.get(kind(et), 0.0)


def has_zero(et: str) -> bool:
    """Whether the type holds 0 (f8E8M0FNU does not: the spec's zero fill of processes that
    receive nothing has no value there, so such variants are left out for it)."""
    if kind(et) not in ("float", "complex"):
        return True
    return round_value(0.0, float_format(component(et) if kind(et) == "complex" else et)) == 0.0


# ------------------------------------------------------------------ program text
def groups_attr(name: str, groups: Sequence[Sequence[int]]) -> str:
    rows = len(groups)
    cols = len(groups[0]) if rows else (2 if name == "source_target_pairs" else 0)
    body = "[" + ", ".join("[" + ", ".join(str(x) for x in g) + "]" for g in groups) + "]"
    val = body if rows else ""
    return f"{name} = dense<{val}> : tensor<{rows}x{cols}xi64>"


def channel_attr(channel: Optional[int], use_global: bool = False, kind_: int = 1) -> str:
    parts = []
    if channel is not None:
        parts.append(f"channel_handle = #stablehlo.channel_handle<handle = {channel}, type = {kind_ if channel > 0 else 0}>")
    if use_global:
        parts.append("use_global_device_ids")
    return ", ".join(parts)


def region(body: str, et: str) -> str:
    sop = {"add": "stablehlo.add", "max": "stablehlo.maximum", "min": "stablehlo.minimum",
           "mul": "stablehlo.multiply", "and": "stablehlo.and", "or": "stablehlo.or"}[body]
    t0 = tensor((), et)
    return (f"{{\n  ^bb0(%a: {t0}, %b: {t0}):\n    %s = \"{sop}\"(%a, %b) : ({t0}, {t0}) -> {t0}\n"
            f"    \"stablehlo.return\"(%s) : ({t0}) -> ()\n  }}")


def _attrs(*parts: str) -> str:
    return ", ".join(p for p in parts if p)


def _flat(per: Dict[Process, List[np.ndarray]], R: int, P: int) -> List[np.ndarray]:
    return [a for me in processes(R, P) for a in per[me]]


def _case(op, et, variant, prog, ins, exp, R, P, note="", ops=(), oracle=ORACLE, out_ets=None):
    flat_in = _flat(ins, R, P)
    flat_exp = _flat(exp, R, P)
    ets = out_ets or [str(a.dtype) and et for a in flat_exp]
    return make_case(op, et, variant, prog, flat_in, flat_exp, ets, [rule_for(e, 0) for e in ets],
                     oracle, MODULE, note, ops, num_replicas=R, num_partitions=P)


def _inputs(et, shapes, R, P, seed, maker=None, rng=None):
    """Per-process arrays: for each process and each shape, distinct values."""
    out = {}
    for i, me in enumerate(processes(R, P)):
        arrs = []
        for j, s in enumerate(shapes):
            n = math.prod(s)
            vals = maker(et, n, seed + 11 * i + 5 * j, rng) if maker else move_values(et, n, seed + 11 * i + 5 * j)
            arrs.append(make_array(vals, et, s))
        out[me] = arrs
    return out


# variants of the ops whose groups follow reduce_mode:
# (name, R, P, replica_groups, channel, use_global, full_only)
REDUCE_GRIDS = [
    ("cross_replica_r4_groups_0_2_1_3", 4, 1, [[0, 2], [1, 3]], None, False, False),
    ("cross_replica_r2p2_channel0", 2, 2, [[1, 0]], 0, False, False),
    ("cross_replica_and_partition_r2p2", 2, 2, [[1, 0]], 1, False, False),
    ("flattened_ids_r2p2", 2, 2, [[3, 0], [1, 2]], 2, True, False),
    ("cross_replica_r3_one_group", 3, 1, [[2, 0, 1]], None, False, True),
    ("cross_replica_and_partition_r2p2_singletons", 2, 2, [[0], [1]], 5, False, True),
    ("flattened_ids_r1p4_one_group", 1, 4, [[1, 3, 0, 2]], 1, True, True),
    ("cross_replica_r1_single_process", 1, 1, [[0]], None, False, True),
]


def all_gather_cases(full, fast) -> List:
    op = "stablehlo.all_gather"
    out = []
    for et in _types(op, fast):
        for name, R, P, groups, ch, glob, full_only in REDUCE_GRIDS:
            if full_only and not full:
                continue
            pg = process_groups(reduce_mode(ch or 0, glob), groups, R, P)
            n = len(pg[0])
            main = name in (REDUCE_GRIDS[0][0], REDUCE_GRIDS[2][0])
            dims = [(0, 1)] + ([(1, 1), (0, 2)] if full and main else [])      # (all_gather_dim, operands)
            for dim, nops in dims:
                shapes = [(2, 3), (1, 2)][:nops]
                ins = _inputs(et, shapes, R, P, 3 + dim)
                exp = oracle_all_gather(ins, pg, dim)
                rtys = []
                for s in shapes:
                    rs = list(s)
                    rs[dim] *= n
                    rtys.append(tensor(rs, et))
                atys = [tensor(s, et) for s in shapes]
                b = ProgramBuilder(atys)
                res = b.op(op, [(b.arg(i), t) for i, t in enumerate(atys)], rtys,
                           _attrs(f"all_gather_dim = {dim} : i64", groups_attr("replica_groups", groups),
                                  channel_attr(ch, glob)))
                prog = b.text(list(zip(res, rtys)))
                v = f"{name}/dim{dim}" + (f"/{nops}_operands" if nops > 1 else "")
                out.append(_case(op, et, v, prog, ins, exp, R, P, out_ets=[et] * (nops * R * P)))
    return out


REDUCE_BODIES = ("add", "max", "min", "mul", "and", "or")


def _bodies(et, full):
    k = kind(et)
    bodies = REDUCE_BODIES if full else ("add", "max", "and")
    if k in ("float", "complex"):
        bodies = [b for b in bodies if b not in ("and", "or")]
    if k == "complex":
        bodies = [b for b in bodies if b in ("add", "mul")]
    return bodies


def _reduce_per_process(ins, pg, body, et):
    """{process: [reduced value list per operand]} over each process's group."""
    out = {}
    for me in ins:
        g = group_of(pg, me)
        if g is None:
            raise ValueError(f"process {me} is in no group")
        out[me] = [reduce_values(body, et, [ins[s][j].reshape(-1).tolist() for s in g]) for j in range(len(ins[me]))]
    return out


def _as_python(a: np.ndarray, et: str) -> list:
    k = kind(et)
    vals = a.reshape(-1).tolist() if k != "float" else [float(x) for x in a.reshape(-1).astype(np.float64)]
    if k in ("signed", "unsigned"):
        vals = [int(x) for x in vals]
    if k == "complex":
        vals = [complex(x) for x in vals]
    return vals


def all_reduce_cases(full, fast) -> List:
    op = "stablehlo.all_reduce"
    out = []
    for et in _types(op, fast):
        for body in _bodies(et, full):
            for name, R, P, groups, ch, glob, full_only in REDUCE_GRIDS:
                if full_only and not full:
                    continue
                if body != "add" and name != REDUCE_GRIDS[0][0]:
                    continue          # the other bodies on one grid: the groups are body-independent
                pg = process_groups(reduce_mode(ch or 0, glob), groups, R, P)
                rng = reduce_value_set(et, body, len(pg[0]))
                if rng is None:
                    continue
                for nops in ((1, 2) if (body == "add" and name in (REDUCE_GRIDS[0][0], REDUCE_GRIDS[3][0])) else (1,)):
                    shapes = [(2, 3), (4,)][:nops]
                    ins = _inputs(et, shapes, R, P, 1, reduce_inputs, rng)
                    red = {}
                    for me in ins:
                        g = group_of(pg, me)
                        red[me] = [make_array(reduce_values(body, et, [_as_python(ins[s][j], et) for s in g]), et, shapes[j])
                                   for j in range(nops)]
                    tys = [tensor(s, et) for s in shapes]
                    b = ProgramBuilder(tys)
                    res = b.op(op, [(b.arg(i), t) for i, t in enumerate(tys)], tys,
                               _attrs(groups_attr("replica_groups", groups), channel_attr(ch, glob)), region(body, et))
                    prog = b.text(list(zip(res, tys)))
                    v = f"{body}/{name}" + (f"/{nops}_operands" if nops > 1 else "")
                    out.append(_case(op, et, v, prog, ins, red, R, P, REDUCE_NOTE, out_ets=[et] * (nops * R * P),
                                     oracle="python-exact"))
    return out


def reduce_scatter_cases(full, fast) -> List:
    op = "stablehlo.reduce_scatter"
    out = []
    for et in _types(op, fast):
        for body in _bodies(et, full):
            for name, R, P, groups, ch, glob, full_only in REDUCE_GRIDS:
                if full_only and not full:
                    continue
                if body != "add" and name != REDUCE_GRIDS[0][0]:
                    continue          # the other bodies on one grid: the groups are body-independent
                pg = process_groups(reduce_mode(ch or 0, glob), groups, R, P)
                n = len(pg[0])
                rng = reduce_value_set(et, body, n)
                if rng is None:
                    continue
                for dim in ((0, 1) if full and body == "add" and name == REDUCE_GRIDS[0][0] else (1,)):
                    shape = [2, 3]
                    shape[dim] = n * (2 if dim == 0 else 1)
                    rshape = list(shape)
                    rshape[dim] //= n
                    ins = _inputs(et, [tuple(shape)], R, P, 2, reduce_inputs, rng)
                    exp = {}
                    for me in ins:
                        g = group_of(pg, me)
                        total = make_array(reduce_values(body, et, [_as_python(ins[s][0], et) for s in g]), et, tuple(shape))
                        exp[me] = [_split(total, n, dim, g.index(me)).copy()]
                    ti, to = tensor(shape, et), tensor(rshape, et)
                    b = ProgramBuilder([ti])
                    res = b.op(op, [(b.arg(0), ti)], [to],
                               _attrs(f"scatter_dimension = {dim} : i64", groups_attr("replica_groups", groups),
                                      channel_attr(ch, glob)), region(body, et))
                    prog = b.text([(res[0], to)])
                    out.append(_case(op, et, f"{body}/{name}/dim{dim}", prog, ins, exp, R, P, REDUCE_NOTE,
                                     out_ets=[et] * (R * P), oracle="python-exact"))
    return out


# (name, R, P, replica_groups, channel, full_only): cross_replica without a channel, cross_partition with one
CROSS_GRIDS = [
    ("cross_replica_r2", 2, 1, [[0, 1]], None, False),
    ("cross_replica_r4_groups_3_1_0_2", 4, 1, [[3, 1], [0, 2]], 0, False),
    ("cross_partition_r2p2", 2, 2, [[1, 0]], 1, False),
    ("cross_partition_r1p3", 1, 3, [[2, 0, 1]], 3, True),
    ("cross_replica_r2p2", 2, 2, [[0, 1]], None, True),
]


def all_to_all_cases(full, fast) -> List:
    op = "stablehlo.all_to_all"
    out = []
    for et in _types(op, fast):
        for name, R, P, groups, ch, full_only in CROSS_GRIDS:
            if full_only and not full:
                continue
            pg = process_groups(cross_mode(ch or 0), groups, R, P)
            n = len(pg[0])
            main = name in (CROSS_GRIDS[0][0], CROSS_GRIDS[2][0])
            cfgs = [(1, 0, 1)] + ([(0, 0, 1), (0, 1, 1), (1, 0, 2)] if full and main else [])
            for sd, cd, nops in cfgs:
                base = [2, 3]
                base[sd] = n * 2
                shapes = [tuple(base)] * nops
                ins = _inputs(et, shapes, R, P, 7 + sd)
                exp = oracle_all_to_all(ins, pg, sd, cd, n)
                atys = [tensor(s, et) for s in shapes]
                rtys = [tensor(exp[(0, 0)][j].shape, et) for j in range(nops)]
                b = ProgramBuilder(atys)
                res = b.op(op, [(b.arg(i), t) for i, t in enumerate(atys)], rtys,
                           _attrs(f"split_dimension = {sd} : i64", f"concat_dimension = {cd} : i64",
                                  f"split_count = {n} : i64", groups_attr("replica_groups", groups),
                                  channel_attr(ch)))
                prog = b.text(list(zip(res, rtys)))
                v = f"{name}/split{sd}_concat{cd}" + (f"/{nops}_operands" if nops > 1 else "")
                out.append(_case(op, et, v, prog, ins, exp, R, P, out_ets=[et] * (nops * R * P)))
    return out


# (name, R, P, source_target_pairs, channel, full_only)
PERMUTE_GRIDS = [
    ("cross_replica_r4_ring", 4, 1, [[0, 1], [1, 2], [2, 3], [3, 0]], None, False),
    ("cross_replica_r4_partial", 4, 1, [[0, 2], [2, 1]], 0, False),
    ("cross_partition_r2p2", 2, 2, [[0, 1]], 1, False),
    ("cross_replica_r2p2_swap", 2, 2, [[1, 0], [0, 1]], None, True),
    ("cross_replica_r3_no_pairs", 3, 1, [], None, True),
]


def collective_permute_cases(full, fast) -> List:
    op = "stablehlo.collective_permute"
    out = []
    for et in _types(op, fast):
        for name, R, P, pairs, ch, full_only in PERMUTE_GRIDS:
            if full_only and not full:
                continue
            mapped = process_groups(cross_mode(ch or 0), pairs, R, P) if pairs else []
            if not has_zero(et) and len({d for _, d in mapped}) < R * P:
                continue              # a process receives nothing: zeros, which the type lacks
            shape = (2, 3)
            ins = _inputs(et, [shape], R, P, 4)
            zero = make_array([zero_of(et)] * 6, et, shape)
            res_single = oracle_permute({me: v[0] for me, v in ins.items()}, mapped, zero)
            exp = {me: [v] for me, v in res_single.items()}
            t = tensor(shape, et)
            b = ProgramBuilder([t])
            res = b.op(op, [(b.arg(0), t)], [t], _attrs(groups_attr("source_target_pairs", pairs), channel_attr(ch)))
            prog = b.text([(res[0], t)])
            out.append(_case(op, et, name, prog, ins, exp, R, P, "processes that receive nothing get zeros",
                             out_ets=[et] * (R * P)))
    return out


# (name, R, P, replica_groups, channel, dynamic roots or None, full_only)
BROADCAST_GRIDS = [
    ("cross_replica_r4_group_2_1", 4, 1, [[2, 1]], None, None, False),
    ("cross_replica_r4_groups_1_0_3_2", 4, 1, [[1, 0], [3, 2]], 0, None, False),
    ("cross_partition_r2p2", 2, 2, [[1, 0]], 1, None, False),
    ("cross_replica_r3_dynamic_root", 3, 1, [[0, 2, 1]], None, [2, 0], True),
    ("cross_partition_r1p3_subset", 1, 3, [[2, 0]], 4, None, True),
]


def collective_broadcast_cases(full, fast) -> List:
    op = "stablehlo.collective_broadcast"
    out = []
    for et in _types(op, fast):
        for name, R, P, groups, ch, roots, full_only in BROADCAST_GRIDS:
            if full_only and not full:
                continue
            pg = process_groups(cross_mode(ch or 0), groups, R, P)
            if not has_zero(et) and sum(len(g) for g in pg) < R * P:
                continue              # a process in no group gets zeros, which the type lacks
            shapes = [(2, 2)] if roots is None else [(2, 2), (3,)]
            ins = _inputs(et, shapes, R, P, 6)
            zeros = [make_array([zero_of(et)] * math.prod(s), et, s) for s in shapes]
            exp = oracle_broadcast(ins, pg, roots or [0], zeros)
            tys = [tensor(s, et) for s in shapes]
            atys = list(tys)
            if roots is not None:
                atys.append(tensor((len(roots),), "i32"))
                for me in ins:
                    ins[me] = ins[me] + [make_array(roots, "i32", (len(roots),))]
            b = ProgramBuilder(atys)
            res = b.op(op, [(b.arg(i), t) for i, t in enumerate(atys)], tys,
                       _attrs(groups_attr("replica_groups", groups), channel_attr(ch),
                              "has_dynamic_root" if roots is not None else ""))
            prog = b.text(list(zip(res, tys)))
            out.append(_case(op, et, name, prog, ins, exp, R, P, "processes in no group get zeros",
                             out_ets=[et] * (len(shapes) * R * P)))
    return out


# (name, R, P, replica_groups, channel, use_global, dynamic roots or None, full_only)
COLLECTIVE_REDUCE_GRIDS = [
    ("cross_replica_r2", 2, 1, [[0, 1]], 0, False, None, False),
    ("cross_replica_r4_groups_3_1_0_2", 4, 1, [[3, 1], [0, 2]], None, False, None, False),
    ("cross_replica_and_partition_r2p2", 2, 2, [[1, 0]], 1, False, None, True),
    ("flattened_ids_r2p2", 2, 2, [[3, 0], [1, 2]], 2, True, None, True),
    ("cross_replica_r3_dynamic_root", 3, 1, [[2, 0, 1]], None, False, [1, 2], True),
]


def collective_reduce_cases(full, fast) -> List:
    """The root of each group (its first process, or the one the dynamic root operand names)
    gets the reduction; every other process gets zeros (upstream's interpret tests and the
    interpreter agree on this; the op is not in the spec document yet)."""
    op = "stablehlo.collective_reduce"
    out = []
    for et in _types(op, fast):
        for body in _bodies(et, full):
            if not full and body != "add":
                continue
            for name, R, P, groups, ch, glob, roots, full_only in COLLECTIVE_REDUCE_GRIDS:
                if full_only and not full:
                    continue
                if body != "add" and name != COLLECTIVE_REDUCE_GRIDS[0][0]:
                    continue
                if not has_zero(et):
                    continue          # non-root processes get zeros
                pg = process_groups(reduce_mode(ch or 0, glob), groups, R, P)
                rng = reduce_value_set(et, body, len(pg[0]))
                if rng is None:
                    continue
                shapes = [(2, 3)] if roots is None else [(2, 3), (4,)]
                ins = _inputs(et, shapes, R, P, 9, reduce_inputs, rng)
                exp = {}
                for me in ins:
                    g = group_of(pg, me)
                    vals = []
                    for j, s in enumerate(shapes):
                        root = g[(roots or [0])[j]]
                        if me == root:
                            vals.append(make_array(reduce_values(body, et, [_as_python(ins[q][j], et) for q in g]), et, s))
                        else:
                            vals.append(make_array([zero_of(et)] * math.prod(s), et, s))
                    exp[me] = vals
                tys = [tensor(s, et) for s in shapes]
                atys = list(tys)
                if roots is not None:
                    atys.append(tensor((len(roots),), "i32"))
                    for me in ins:
                        ins[me] = ins[me] + [make_array(roots, "i32", (len(roots),))]
                b = ProgramBuilder(atys)
                res = b.op(op, [(b.arg(i), t) for i, t in enumerate(atys)], tys,
                           _attrs(groups_attr("replica_groups", groups), channel_attr(ch, glob),
                                  "has_dynamic_root" if roots is not None else ""), region(body, et))
                prog = b.text(list(zip(res, tys)))
                out.append(_case(op, et, f"{body}/{name}", prog, ins, exp, R, P,
                                 REDUCE_NOTE + "; processes other than their group's root get zeros",
                                 out_ets=[et] * (len(shapes) * R * P), oracle="python-exact"))
    return out


def cross_replica_sum_cases(full, fast) -> List:
    """The legacy op: an all_reduce with addition over each replica group, within each
    partition (cross_replica)."""
    op = "stablehlo.cross-replica-sum"
    out = []
    grids = [("r4_groups_0_2_1_3", 4, 1, [[0, 2], [1, 3]]), ("r2p2_one_group", 2, 2, [[1, 0]])]
    if full:
        grids.append(("r3_one_group", 3, 1, [[0, 1, 2]]))
    for et in _types(op, fast):
        for name, R, P, groups in grids:
            pg = process_groups("cross_replica", groups, R, P)
            if not has_zero(et):
                # f8E8M0FNU: powers of two, whose sums are exact only when equal: every member
                # of a group holds the same values (each group its own), so each sum is 2x; a
                # wrong grouping would add unequal values
                if len(pg[0]) != 2:
                    continue
                ins = {}
                for gi, g in enumerate(pg):
                    vals = [2.0 ** ((i * 3 + gi * 5) % 7 - 3) for i in range(6)]
                    for me in g:
                        ins[me] = [make_array(vals, et, (2, 3))]
            else:
                rng = reduce_value_set(et, "add", len(pg[0]))
                if rng is None:
                    continue
                ins = _inputs(et, [(2, 3)], R, P, 5, reduce_inputs, rng)
            exp = {}
            for me in ins:
                g = group_of(pg, me)
                exp[me] = [make_array(reduce_values("add", et, [_as_python(ins[q][0], et) for q in g]), et, (2, 3))]
            t = tensor((2, 3), et)
            b = ProgramBuilder([t])
            res = b.op(op, [(b.arg(0), t)], [t], groups_attr("replica_groups", groups))
            prog = b.text([(res[0], t)])
            out.append(_case(op, et, name, prog, ins, exp, R, P, REDUCE_NOTE, out_ets=[et] * (R * P),
                             oracle="python-exact"))
    return out


def async_cases(full, fast) -> List:
    """async_start's cases: async_start/async_done around an all_gather (2 replicas)."""
    out = []
    op = "stablehlo.async_start"
    for et in _types(op, fast):
        R = 2
        pg = process_groups("cross_replica", [[1, 0]], R, 1)
        ins = _inputs(et, [(2, 2)], R, 1, 8)
        exp = oracle_all_gather(ins, pg, 0)
        ti, to = tensor((2, 2), et), tensor((4, 2), et)
        prog = (f"func.func @main(%arg0: {ti}) -> ({to}) {{\n"
                f"  %0 = \"stablehlo.async_start\"(%arg0) ({{\n"
                f"  ^bb0(%a: {ti}):\n"
                f"    %g = \"stablehlo.all_gather\"(%a) {{all_gather_dim = 0 : i64, {groups_attr('replica_groups', [[1, 0]])}}} : ({ti}) -> {to}\n"
                f"    \"stablehlo.return\"(%g) : ({to}) -> ()\n"
                f"  }}) : ({ti}) -> !stablehlo.future<{to}>\n"
                f"  %1 = \"stablehlo.async_done\"(%0) : (!stablehlo.future<{to}>) -> {to}\n"
                f"  \"func.return\"(%1) : ({to}) -> ()\n}}\n")
        ops = ("stablehlo.async_start", "stablehlo.async_done", "stablehlo.all_gather")
        out.append(_case(op, et, "all_gather_r2", prog, ins, exp, R, 1, ops=ops, out_ets=[et] * R))
    return out


def async_done_cases(full, fast) -> List:
    """async_done's cases: the slice variant (one process) of every type."""
    op = "stablehlo.async_done"
    out = []
    for et in _types("stablehlo.async_start", fast):
        x = make_array(move_values(et, 12, 2), et, (4, 3))
        ts, tx = tensor((2, 3), et), tensor((4, 3), et)
        prog = (f"func.func @main(%arg0: {tx}) -> ({ts}) {{\n"
                f"  %0 = \"stablehlo.async_start\"(%arg0) ({{\n"
                f"  ^bb0(%a: {tx}):\n"
                f"    %s = \"stablehlo.slice\"(%a) {{start_indices = array<i64: 1, 0>, limit_indices = array<i64: 3, 3>, "
                f"strides = array<i64: 1, 1>}} : ({tx}) -> {ts}\n"
                f"    \"stablehlo.return\"(%s) : ({ts}) -> ()\n"
                f"  }}) : ({tx}) -> !stablehlo.future<{ts}>\n"
                f"  %1 = \"stablehlo.async_done\"(%0) : (!stablehlo.future<{ts}>) -> {ts}\n"
                f"  \"func.return\"(%1) : ({ts}) -> ()\n}}\n")
        out.append(_case(op, et, "slice", prog, {(0, 0): [x]}, {(0, 0): [x[1:3, :].copy()]}, 1, 1,
                         ops=("stablehlo.async_done", "stablehlo.async_start", "stablehlo.slice"), out_ets=[et]))
    return out


TOKEN_NOTE = ("a token carries no value: the case checks that the program runs and that the "
              "value threaded through optimization_barrier with the token comes back unchanged")


def _token_program(et: str, lines: List[str], token: str) -> str:
    t = tensor((2, 3), et)
    body = "\n".join("  " + ln for ln in lines)
    return (f"func.func @main(%arg0: {t}) -> ({t}) {{\n{body}\n"
            f"  %b:2 = \"stablehlo.optimization_barrier\"(%arg0, {token}) : ({t}, !stablehlo.token) -> ({t}, !stablehlo.token)\n"
            f"  \"func.return\"(%b#0) : ({t}) -> ()\n}}\n")


TOK = "!stablehlo.token"


def token_cases(full, fast) -> List:
    """after_all (no operand, one, several, nested), create_token, outfeed."""
    out = []
    ets = [t for t in ("i32", "f32") if fast is None or t in fast] or ["f32"]
    variants = {
        "stablehlo.after_all": [
            ("no_operands", [f'%0 = "stablehlo.after_all"() : () -> {TOK}'], "%0"),
            ("two_tokens", [f'%0 = "stablehlo.after_all"() : () -> {TOK}', f'%1 = "stablehlo.after_all"() : () -> {TOK}',
                            f'%2 = "stablehlo.after_all"(%0, %1) : ({TOK}, {TOK}) -> {TOK}'], "%2"),
            ("nested_three", [f'%0 = "stablehlo.after_all"() : () -> {TOK}',
                              f'%1 = "stablehlo.after_all"(%0) : ({TOK}) -> {TOK}',
                              f'%2 = "stablehlo.after_all"(%0, %1, %1) : ({TOK}, {TOK}, {TOK}) -> {TOK}'], "%2"),
        ],
        "stablehlo.create_token": [
            ("plain", [f'%0 = "stablehlo.create_token"() : () -> {TOK}'], "%0"),
            ("joined_by_after_all", [f'%0 = "stablehlo.create_token"() : () -> {TOK}',
                                     f'%1 = "stablehlo.create_token"() : () -> {TOK}',
                                     f'%2 = "stablehlo.after_all"(%0, %1) : ({TOK}, {TOK}) -> {TOK}'], "%2"),
        ],
    }
    for op, vs in variants.items():
        for et in ets:
            for name, lines, tok in vs:
                x = make_array(move_values(et, 6, 1), et, (2, 3))
                out.append(_case(op, "token", f"{name}/{et}", _token_program(et, lines, tok), {(0, 0): [x]},
                                 {(0, 0): [x.copy()]}, 1, 1, TOKEN_NOTE,
                                 ops=(op, "stablehlo.after_all", "stablehlo.optimization_barrier"), out_ets=[et]))
    op = "stablehlo.outfeed"
    for et in _types(op, fast):
        x = make_array(move_values(et, 6, 4), et, (2, 3))
        t = tensor((2, 3), et)
        for name, lines, tok in [
                ("one_input", [f'%0 = "stablehlo.after_all"() : () -> {TOK}',
                               f'%1 = "stablehlo.outfeed"(%arg0, %0) {{outfeed_config = ""}} : ({t}, {TOK}) -> {TOK}'], "%1"),
                ("two_inputs_chained", [f'%0 = "stablehlo.after_all"() : () -> {TOK}',
                                        f'%1 = "stablehlo.outfeed"(%arg0, %arg0, %0) : ({t}, {t}, {TOK}) -> {TOK}',
                                        f'%2 = "stablehlo.outfeed"(%1) {{outfeed_config = "second"}} : ({TOK}) -> {TOK}'], "%2")]:
            if name != "one_input" and not full:
                continue
            out.append(_case(op, et, name, _token_program(et, lines, tok), {(0, 0): [x]}, {(0, 0): [x.copy()]}, 1, 1,
                             TOKEN_NOTE + "; what reaches the host is not observable from @main",
                             ops=(op, "stablehlo.after_all", "stablehlo.optimization_barrier"), out_ets=[et]))
    return out


INFEED_NOTE = ("the infeed queue is implementation-defined: the case's `infeed` holds what the host "
               "feeds each process, one entry per execution of an infeed op in order; the spec fixes "
               "that the op returns those values, in order, and a token")


def _feed(values, types, me=(0, 0)):
    from ..cases import Feed
    return Feed([np.asarray(v) for v in values], list(types), tuple(me))


def _infeed_program(arg_types: Sequence[str], infeeds: Sequence[Tuple[Sequence[str], str]],
                    returns: Sequence[Tuple[str, str]] = (), extra: Sequence[str] = (),
                    barrier_arg: bool = False) -> str:
    """@main: a token from after_all, then one infeed per `infeeds` entry ((its tensor result
    types, its attribute text)), each taking the previous infeed's token; returns every infeed's
    tensor results in order (or `returns`, after the `extra` lines, which may use %f<k>#<i>).
    `barrier_arg`: return %arg0 threaded through optimization_barrier with the last token."""
    args = ", ".join(f"%arg{i}: {t}" for i, t in enumerate(arg_types))
    lines = [f'%tok = "stablehlo.after_all"() : () -> {TOK}']
    prev, results = "%tok", []
    for k, (tys, attrs) in enumerate(infeeds):
        n = len(tys) + 1
        head = f"%f{k}:{n}" if n > 1 else f"%f{k}"
        a = f" {{{attrs}}}" if attrs else ""
        lines.append(f'{head} = "stablehlo.infeed"({prev}){a} : ({TOK}) -> ({", ".join(list(tys) + [TOK])})')
        prev = f"%f{k}#{len(tys)}" if n > 1 else f"%f{k}"
        results += [(f"%f{k}#{i}", t) for i, t in enumerate(tys)]
    lines += list(extra)
    if barrier_arg:
        t = arg_types[0]
        lines.append(f'%b:2 = "stablehlo.optimization_barrier"(%arg0, {prev}) : ({t}, {TOK}) -> ({t}, {TOK})')
        results = [("%b#0", t)]
    if returns:
        results = list(returns)
    vals = ", ".join(v for v, _ in results)
    tys = ", ".join(t for _, t in results)
    body = "\n".join("  " + ln for ln in lines)
    return f"func.func @main({args}) -> ({tys}) {{\n{body}\n  \"func.return\"({vals}) : ({tys}) -> ()\n}}\n"


# infeed of a quantized tensor, observed through uniform_dequantize (a quantized value cannot
# leave @main in every backend's calling convention): (variant, type, dequantize(q_j) for the
# storage integers q_j along the quantized dimension j, or one (scale, zero point))
INFEED_QUANT = [
    ("per_tensor", "!quant.uniform<i8:f32, 5.000000e-01:-3>", None, [(0.5, -3)]),
    ("per_axis_dim1", "!quant.uniform<i8:f32:1, {5.000000e-01:-3,2.500000e-01:2,1.000000e+00:0}>", 1,
     [(0.5, -3), (0.25, 2), (1.0, 0)]),
]


def infeed_cases(full, fast) -> List:
    """stablehlo.infeed: every element type its results admit (one result, two results, two
    infeeds in order; rank 0, a size-0 dimension, infeed_config/layout in the full suite),
    quantized results, an infeed of a token only, and per-process queues of a process grid."""
    op = "stablehlo.infeed"
    out = []
    from stablehlo_ref import spec
    ets = [t for t in admitted(spec.op(op).results[0].type) if fast is None or t in fast]
    for et in ets:
        t23, t4 = tensor((2, 3), et), tensor((4,), et)
        a = make_array(move_values(et, 6, 21), et, (2, 3))
        b = make_array(move_values(et, 4, 22), et, (4,))
        variants = [
            ("one_result", [([t23], "")], [[a]], True),
            ("two_results", [([t23, t4], 'infeed_config = ""')], [[a, b]], True),
            ("two_infeeds_in_order", [([t23], ""), ([t4], "")], [[a], [b]], True),
            ("rank0", [([tensor((), et)], "")], [[make_array(move_values(et, 1, 23), et, ())]], False),
            ("size0", [([tensor((0, 3), et)], "")], [[make_array([], et, (0, 3))]], False),
            ("config_and_layout", [([t23, t4], 'infeed_config = "feed config", layout = [[0, 1], [0]]')],
             [[a, b]], False),
        ]
        for name, infeeds, feeds, in_fast in variants:
            if not (full or in_fast):
                continue
            prog = _infeed_program([], infeeds)
            exp = [v.copy() for f in feeds for v in f]
            c = _case(op, et, name, prog, {(0, 0): []}, {(0, 0): exp}, 1, 1,
                      INFEED_NOTE + ("; `layout` (minor-to-major per result) sets how the values are laid "
                                     "out in transfer, not their values" if "layout" in name else ""),
                      ops=(op, "stablehlo.after_all"), out_ets=[et] * len(exp))
            c.infeed = [_feed(f, tys) for f, (tys, _) in zip(feeds, infeeds)]
            out.append(c)
    # quantized results, dequantized in the program: the oracle is the spec's dequantize,
    # (q - zero point) * scale, exact here and rounded once to f32
    if fast is None or "f32" in fast:
        for name, qt, qdim, params in INFEED_QUANT:
            tq, tf = f"tensor<2x3x{qt}>", tensor((2, 3), "f32")
            q = make_array([-128, -3, 7, 127, 0, -60], "i8", (2, 3))
            exp = np.zeros((2, 3), np.float32)
            for i in range(2):
                for j in range(3):
                    sc, zp = params[j if qdim == 1 else 0]
                    exp[i, j] = round_value((int(q[i, j]) - zp) * sc, float_format("f32"))
            prog = _infeed_program([], [([tq], "")], returns=[("%d", tf)],
                                   extra=[f'%d = "stablehlo.uniform_dequantize"(%f0#0) : ({tq}) -> {tf}'])
            c = _case(op, "!quant.uniform<i8:f32>", name, prog, {(0, 0): []}, {(0, 0): [exp]}, 1, 1,
                      INFEED_NOTE + "; the quantized value is observed through uniform_dequantize: the "
                      "oracle is (q - zero point) * scale per the quantized dimension, exact in f32",
                      ops=(op, "stablehlo.after_all", "stablehlo.uniform_dequantize"), out_ets=["f32"])
            c.infeed = [_feed([q], [tq])]
            out.append(c)
    # an infeed whose only result is its token: the host feeds an empty entry
    for et in [t for t in ("f32",) if fast is None or t in fast] or ["f32"]:
        x = make_array(move_values(et, 6, 24), et, (2, 3))
        prog = _infeed_program([tensor((2, 3), et)], [([], "")], barrier_arg=True)
        c = _case(op, "token", f"token_only/{et}", prog, {(0, 0): [x]}, {(0, 0): [x.copy()]}, 1, 1,
                  INFEED_NOTE + "; an infeed with no tensor result returns only its token: the case "
                  "checks that the program runs and that %arg0 threaded with that token comes back unchanged",
                  ops=(op, "stablehlo.after_all", "stablehlo.optimization_barrier"), out_ets=[et])
        c.infeed = [_feed([], [])]
        out.append(c)
    # per-process queues: every process reads its own feeds (same program, different values)
    for R, P, in_fast in ((1, 2, True), (2, 1, False), (2, 2, False)):
        if not (full or in_fast):
            continue
        for et in [t for t in ("i32", "f32") if fast is None or t in fast]:
            t23, t4 = tensor((2, 3), et), tensor((4,), et)
            feeds, exp = [], {}
            for i, me in enumerate(processes(R, P)):
                a = make_array(move_values(et, 6, 31 + 7 * i), et, (2, 3))
                b = make_array(move_values(et, 4, 32 + 7 * i), et, (4,))
                feeds += [_feed([a], [t23], me), _feed([b], [t4], me)]
                exp[me] = [a.copy(), b.copy()]
            prog = _infeed_program([], [([t23], ""), ([t4], "")])
            c = _case(op, et, f"per_process_r{R}p{P}", prog, {me: [] for me in processes(R, P)}, exp, R, P,
                      INFEED_NOTE + "; each process has its own queue (the host feeds each device)",
                      ops=(op, "stablehlo.after_all"), out_ets=[et] * (2 * R * P))
            c.infeed = feeds
            out.append(c)
    return out


SEND_RECV_NOTE = ("device-to-device send/recv: each process sends to the targets of its "
                  "source_target_pairs and receives from its source; the spec names cross_replica and "
                  "cross_partition for the pairs without saying which applies, so these cases read them like "
                  "collective_permute's (channel_id > 0: cross_partition) and use grids of one replica "
                  "or pairs that are the same under both readings where they can")


def _send_recv_program(et: str, shapes, channels) -> str:
    """Every process sends its arguments on each channel (pairs per channel), then receives."""
    tys = [tensor(s, et) for s in shapes]
    args = ", ".join(f"%arg{i}: {t}" for i, t in enumerate(tys))
    lines = [f'%tok = "stablehlo.after_all"() : () -> {TOK}']
    results, rtys = [], []
    prev = "%tok"
    for k, (ch, pairs) in enumerate(channels):
        attrs = _attrs(f"channel_handle = #stablehlo.channel_handle<handle = {ch}, type = 1>", "is_host_transfer = false",
                       groups_attr("source_target_pairs", pairs))
        ops = ", ".join(f"%arg{i}" for i in range(len(tys)))
        lines.append(f'%s{k} = "stablehlo.send"({ops}, {prev}) {{{attrs}}} : ({", ".join(tys)}, {TOK}) -> {TOK}')
        lines.append(f'%r{k}:{len(tys) + 1} = "stablehlo.recv"(%s{k}) {{{attrs}}} : ({TOK}) -> ({", ".join(tys)}, {TOK})')
        prev = f"%r{k}#{len(tys)}"
        results += [f"%r{k}#{i}" for i in range(len(tys))]
        rtys += tys
    body = "\n".join("  " + ln for ln in lines)
    return (f"func.func @main({args}) -> ({', '.join(rtys)}) {{\n{body}\n"
            f"  \"func.return\"({', '.join(results)}) : ({', '.join(rtys)}) -> ()\n}}\n")


# (op, name, R, P, shapes, [(channel, source_target_pairs)], full_only)
SEND_RECV_GRIDS = [
    ("stablehlo.send", "self_r1p1", 1, 1, [(2, 3)], [(1, [[0, 0]])], False),
    ("stablehlo.send", "ring_r1p4", 1, 4, [(2, 3)], [(1, [[0, 1], [1, 2], [2, 3], [3, 0]])], False),
    ("stablehlo.send", "swap_r2p2", 2, 2, [(3,)], [(2, [[0, 1], [1, 0]])], True),
    ("stablehlo.recv", "two_operands_r1p2", 1, 2, [(2, 2), (3,)], [(1, [[1, 0], [0, 1]])], False),
    ("stablehlo.recv", "two_channels_r1p3", 1, 3, [(2,)], [(1, [[0, 1], [1, 2], [2, 0]]), (2, [[0, 2], [2, 1], [1, 0]])], True),
]


def send_recv_cases(full, fast) -> List:
    out = []
    for op, name, R, P, shapes, channels, full_only in SEND_RECV_GRIDS:
        if full_only and not full:
            continue
        for et in _types(op if op == "stablehlo.send" else "stablehlo.send", fast):
            ins = _inputs(et, shapes, R, P, 12)
            exp = {me: [] for me in ins}
            for ch, pairs in channels:
                routes = [tuple(pr) for pr in process_groups("cross_partition", pairs, R, P)]
                for me in ins:
                    src = [a for a, b in routes if b == me]
                    if len(src) != 1:
                        raise ValueError(f"{name}: process {me} must receive from exactly one source")
                    exp[me] += [a.copy() for a in ins[src[0]]]
            prog = _send_recv_program(et, shapes, channels)
            out.append(_case(op, et, name, prog, ins, exp, R, P, SEND_RECV_NOTE,
                             ops=("stablehlo.send", "stablehlo.recv", "stablehlo.after_all"),
                             out_ets=[et] * (len(shapes) * len(channels) * R * P)))
    return out


def all_collectives(full, fast) -> List:
    return (all_gather_cases(full, fast) + all_reduce_cases(full, fast) + reduce_scatter_cases(full, fast)
            + all_to_all_cases(full, fast) + collective_permute_cases(full, fast)
            + collective_broadcast_cases(full, fast) + collective_reduce_cases(full, fast)
            + cross_replica_sum_cases(full, fast) + async_cases(full, fast) + async_done_cases(full, fast)
            + token_cases(full, fast) + send_recv_cases(full, fast) + infeed_cases(full, fast))
