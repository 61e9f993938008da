"""The simulated StableHLO process grid and the ops that use it.

`interpreter.run_parallel` runs a grid of `num_replicas x num_partitions` processes, one
thread each, every one with its own `Interpreter` on the same module. Collectives
(`all_reduce`, `all_gather`, `all_to_all`, `reduce_scatter`, `collective_permute`,
`collective_broadcast`, `collective_reduce`) meet in a rendezvous keyed by the processes that
take part: each process hands over its operands, waits for the others, and computes its own
result from everybody's operands on whole arrays. `send`/`recv` go through per-channel
queues, `infeed` reads the process's host-fed queue when the caller gave one (`run_processes`'s
`host_infeed`: the conformance suite's infeed cases), else the functions named by
run_parallel's `infeed` attribute in order (one queue for the grid), and `outfeed` appends to
the grid's outfeed list. Outside run_parallel a program is process
(0, 0) of a 1x1 grid."""
from __future__ import annotations

import threading
from collections import defaultdict, deque

import numpy as np

from ..errors import InterpreterError, NotImplementedOpError
from .numerics import elem
from .registry import TOKEN, harness_op, kernel

# Ops of the `interpreter` test dialect (not StableHLO spec ops, so not in KERNELS).
RENDEZVOUS_TIMEOUT_S = 120.0


class _Aborted(Exception):
    pass


class ProcessGrid:
    def __init__(self, num_replicas: int, num_partitions: int, infeed=(), host_infeed=None):
        self.num_replicas = num_replicas
        self.num_partitions = num_partitions
        self.cond = threading.Condition()
        self.slots = {}                       # (participants, n) -> {process: payload}
        self.readers = defaultdict(int)
        self.sequence = defaultdict(int)      # (process, participants) -> calls so far
        self.finished = set()
        self.failed = False
        self.channels = defaultdict(deque)
        self.infeed = deque(infeed)
        # per process (replica_id, partition_id): a queue of host-fed values, one entry (a
        # list of arrays) per execution of an infeed op; such a process does not read `infeed`
        self.host_infeed = {tuple(k): deque(list(e) for e in v) for k, v in (host_infeed or {}).items()}
        self.outfeed = []

    def exchange(self, me, participants, payload):
        """Hand `payload` to the rendezvous of `participants` (which includes `me`); returns
        {process: payload} of all of them once every one has arrived."""
        participants = tuple(participants)
        with self.cond:
            n = self.sequence[(me, participants)]
            self.sequence[(me, participants)] = n + 1
            key = (participants, n)
            slot = self.slots.setdefault(key, {})
            slot[me] = payload
            self.cond.notify_all()
            while len(slot) < len(participants):
                if self.failed:
                    raise _Aborted()
                gone = [p for p in participants if p in self.finished and p not in slot]
                if gone:
                    raise InterpreterError(
                        f"process {me} waits in a collective for process {gone[0]}, which has "
                        "finished without taking part (do all processes run the same collectives?)")
                if not self.cond.wait(RENDEZVOUS_TIMEOUT_S):
                    raise InterpreterError(f"process {me}: collective timed out waiting for "
                                           f"{[p for p in participants if p not in slot]}")
            out = dict(slot)
            self.readers[key] += 1
            if self.readers[key] == len(participants):
                del self.slots[key]
                del self.readers[key]
            return out

    def send(self, channel, value):
        with self.cond:
            self.channels[channel].append(value)
            self.cond.notify_all()

    def recv(self, me, channel):
        with self.cond:
            q = self.channels[channel]
            while not q:
                if self.failed:
                    raise _Aborted()
                others = {(r, p) for r in range(self.num_replicas) for p in range(self.num_partitions)}
                if others - {me} <= self.finished:
                    raise InterpreterError(f"process {me}: recv on channel {channel} but no "
                                           "process is left to send")
                if not self.cond.wait(RENDEZVOUS_TIMEOUT_S):
                    raise InterpreterError(f"process {me}: recv on channel {channel} timed out")
            return q.popleft()

    def done(self, me, failed=False):
        with self.cond:
            self.finished.add(me)
            if failed:
                self.failed = True
            self.cond.notify_all()


def _grid_of(ctx):
    """The grid and (replica_id, partition_id) of the process `ctx` runs; outside
    run_parallel, process (0, 0) of a 1x1 grid of its own."""
    grid = getattr(ctx, "process_grid", None)
    if grid is None:
        grid = ctx.process_grid = ProcessGrid(1, 1)
        ctx.process_id = (0, 0)
    return grid, ctx.process_id


# ------------------------------------------------------------------ run_parallel
def run_threads(work, arglists, errors) -> None:
    """Run work(*args) for each of `arglists` on its own thread (with a large stack: each runs
    a whole program), wait for all, then raise the first exception a thread left in `errors`."""
    old = threading.stack_size()
    threading.stack_size(64 * 1024 * 1024)
    try:
        threads = [threading.Thread(target=work, args=tuple(a), daemon=True) for a in arglists]
    finally:
        threading.stack_size(old)
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for e in errors:
        if e is not None:
            raise e


@harness_op("interpreter.run_parallel")
def run_parallel(ctx, op, *inputs):
    programs = [[s.root for s in row.elements] for row in op.attributes["programs"].elements]
    if not programs or not programs[0] or any(len(r) != len(programs[0]) for r in programs):
        raise InterpreterError("interpreter.run_parallel: `programs` must be a non-empty "
                               "rectangular array of arrays of function names")
    infeed_attr = op.attributes.get("infeed")
    infeed = [s.root for s in infeed_attr.elements] if infeed_attr is not None else []
    results, _ = run_processes(ctx, programs, list(inputs), infeed)
    flat = [v for r in results for v in r]
    if len(flat) != len(op.results):
        raise InterpreterError(f"interpreter.run_parallel: the programs return {len(flat)} "
                               f"values, the op has {len(op.results)} results")
    return flat


def run_processes(ctx, programs, inputs, infeed=(), host_infeed=None):
    """Run a `len(programs) x len(programs[0])` (replicas x partitions) grid of processes, each
    calling the function named `programs[r][p]` of `ctx`'s module with its share of `inputs`
    (taken in process order: replica-major, as many as its function has arguments). `infeed`:
    function names, the grid's one infeed queue (run_parallel's attribute); `host_infeed`:
    {(replica_id, partition_id): [[array, ...], ...]}, a process's own queue of host-fed
    values (one list per execution of an infeed op, in order). Returns (per-process result
    lists in that order, the ProcessGrid). Used by `interpreter.run_parallel` and by the
    conformance suite's multi-process and infeed cases."""
    from .evaluator import Interpreter
    if not programs or not programs[0] or any(len(r) != len(programs[0]) for r in programs):
        raise InterpreterError("run_processes: `programs` must be a non-empty rectangular grid "
                               "of function names")
    nr, np_ = len(programs), len(programs[0])
    grid = ProcessGrid(nr, np_, infeed, host_infeed)
    if getattr(ctx, "probe_store", None) is None:
        ctx.probe_store = {}          # probes of every process land in the caller's store
    jobs = []
    pos = 0
    for r in range(nr):
        for p in range(np_):
            name = programs[r][p]
            func = ctx.functions.get(name)
            if func is None:
                raise InterpreterError(f"interpreter.run_parallel: unknown function @{name}")
            n_in = len(func.attributes["function_type"].type.inputs)
            jobs.append(((r, p), name, list(inputs[pos:pos + n_in])))
            pos += n_in
    if pos != len(inputs):
        raise InterpreterError(f"interpreter.run_parallel: the programs take {pos} inputs, "
                               f"got {len(inputs)}")
    results = [None] * len(jobs)
    errors = [None] * len(jobs)

    def work(i, pid, name, args):
        child = Interpreter(ctx.module, trace=ctx.trace, custom_call_handler=ctx.custom_call_handler,
                            limits=ctx.limits)
        child.deadline = ctx.deadline
        child.process_grid = grid
        child.process_id = pid
        for attr in ("probe_dir", "probe_store"):
            if hasattr(ctx, attr):
                setattr(child, attr, getattr(ctx, attr))
        try:
            results[i] = child.call(name, args)
            grid.done(pid)
        except _Aborted:
            grid.done(pid, failed=True)
        except BaseException as e:  # noqa: BLE001 - re-raised in the calling thread
            errors[i] = e
            grid.done(pid, failed=True)

    run_threads(work, [(i, *job) for i, job in enumerate(jobs)], errors)
    if any(r is None for r in results):
        raise InterpreterError("interpreter.run_parallel: a process was aborted")
    ctx.outfeed = getattr(ctx, "outfeed", []) + grid.outfeed
    return results, grid


# ------------------------------------------------------------------ process groups
def _groups_attr(op, name="replica_groups"):
    a = op.attributes.get(name)
    if a is None:
        return []
    if getattr(a, "name", None) == "replica_group_mesh_axes":
        raise NotImplementedOpError(f"{op.name} with {name} given as mesh axes",
                                    "only explicit replica-group id lists run", op.where())
    arr = np.asarray(a.array).astype(np.int64)
    if arr.ndim == 1:
        arr = arr.reshape(1, -1) if arr.size else arr.reshape(0, 0)
    return [[int(x) for x in row if x >= 0] for row in arr]


def _channel_id(op) -> int:
    ch = op.attributes.get("channel_handle")
    if ch is None:
        return 0
    if hasattr(ch, "fields"):
        return int(dict(ch.fields).get("handle", 0))
    return int(getattr(ch, "value", 0))


def process_groups(grid, groups, mode):
    R, P = grid.num_replicas, grid.num_partitions
    if mode == "cross_replica":
        groups = groups or [list(range(R))]
        out = [[(r, p) for r in g] for p in range(P) for g in groups]
    elif mode == "cross_partition":
        groups = groups or [list(range(P))]
        out = [[(r, p) for p in g] for r in range(R) for g in groups]
    elif mode == "cross_replica_and_partition":
        groups = groups or [list(range(R))]
        out = [[(r, p) for p in range(P) for r in g] for g in groups]
    else:  # flattened_ids
        out = [[divmod(i, P) for i in g] for g in groups]
    for g in out:
        for r, p in g:
            if not (0 <= r < R and 0 <= p < P):
                raise InterpreterError(f"process ({r}, {p}) of a group is outside the "
                                       f"{R}x{P} process grid")
    return out


def _reduce_mode(op):
    ch = _channel_id(op)
    glob = "use_global_device_ids" in op.attributes
    if ch <= 0 and not glob:
        return "cross_replica"
    if ch > 0 and not glob:
        return "cross_replica_and_partition"
    if glob:
        return "flattened_ids"
    raise InterpreterError("use_global_device_ids needs a channel_id > 0")


def _my_group(ctx, op, mode, attr="replica_groups"):
    grid, me = _grid_of(ctx)
    groups = process_groups(grid, _groups_attr(op, attr), mode)
    for g in groups:
        if me in g:
            return grid, me, g
    return grid, me, None


def _gather(ctx, op, mode, payload):
    grid, me, group = _my_group(ctx, op, mode)
    if group is None:
        raise InterpreterError(f"{op.name}: process {me} is in no process group")
    got = grid.exchange(me, group, payload)
    return me, group, [got[p] for p in group]


def _combine(ctx, op, region, values):
    """Reduce a list of same-shaped arrays with `region`, pairwise (a balanced tree)."""
    from .reduction import _PRIMITIVES, recognize_binary_body
    name = recognize_binary_body(region)
    vals = list(values)
    while len(vals) > 1:
        nxt = []
        for i in range(0, len(vals) - 1, 2):
            a, b = vals[i], vals[i + 1]
            if name is not None and a.dtype.kind in "iufc" and a.dtype.itemsize >= 1 and \
                    elem(op.results[0].type).dtype == a.dtype and elem(op.results[0].type).bits >= 8:
                with np.errstate(all="ignore"):
                    nxt.append(_PRIMITIVES[name][1](a, b).astype(a.dtype))
            else:
                nxt.append(np.asarray(ctx.run_region(region, [a, b])[0]))
        if len(vals) % 2:
            nxt.append(vals[-1])
        vals = nxt
    return vals[0]


def _reduce_all(ctx, op, operands, mode):
    me, group, got = _gather(ctx, op, mode, list(operands))
    region = op.regions[0]
    return me, group, [_combine(ctx, op, region, [g[i] for g in got]) for i in range(len(operands))]


@kernel("stablehlo.all_reduce")
def all_reduce(ctx, op, *operands):
    _, _, out = _reduce_all(ctx, op, operands, _reduce_mode(op))
    return [o.astype(elem(r.type).dtype, copy=False) for o, r in zip(out, op.results)]


@kernel("stablehlo.reduce_scatter")
def reduce_scatter(ctx, op, operand):
    me, group, (total,) = _reduce_all(ctx, op, [operand], _reduce_mode(op))
    d = int(op.attributes["scatter_dimension"].value)
    parts = np.split(total, len(group), axis=d)
    return parts[group.index(me)].astype(elem(op.results[0].type).dtype, copy=False)


@kernel("stablehlo.collective_reduce")
def collective_reduce(ctx, op, *operands):
    dynamic = "has_dynamic_root" in op.attributes
    data = list(operands[:-1]) if dynamic else list(operands)
    me, group, got = _gather(ctx, op, _reduce_mode(op), data)
    out = []
    for j, r in enumerate(op.results):
        root = group[int(np.asarray(operands[-1]).reshape(-1)[j])] if dynamic else group[0]
        if me == root:
            v = _combine(ctx, op, op.regions[0], [g[j] for g in got])
            out.append(np.asarray(v).astype(elem(r.type).dtype, copy=False))
        else:
            out.append(_zeros(r.type, op.name))
    return out


@kernel("stablehlo.all_gather")
def all_gather(ctx, op, *operands):
    _, _, got = _gather(ctx, op, _reduce_mode(op), list(operands))
    d = int(op.attributes["all_gather_dim"].value)
    return [np.concatenate([g[i] for g in got], axis=d) for i in range(len(operands))]


def _cross_mode(op):
    return "cross_replica" if _channel_id(op) <= 0 else "cross_partition"


@kernel("stablehlo.all_to_all")
def all_to_all(ctx, op, *operands):
    me, group, got = _gather(ctx, op, _cross_mode(op), list(operands))
    sd = int(op.attributes["split_dimension"].value)
    cd = int(op.attributes["concat_dimension"].value)
    count = int(op.attributes["split_count"].value)
    k = group.index(me)
    return [np.concatenate([np.split(g[i], count, axis=sd)[k] for g in got], axis=cd)
            for i in range(len(operands))]


def _zeros(t, op_name="collective op"):
    from .quantized import quant_type, quantize
    et = elem(t)
    if et.name == "f8E8M0FNU":
        # the spec's zero fill (a process that receives nothing) has no value in a format
        # without zero; numpy's zero bit pattern would silently read as 2^-127
        raise NotImplementedOpError(op_name, "no semantics: f8E8M0FNU has no zero for the zero-filled result of a "
                                             "process that receives nothing")
    z = np.zeros(tuple(t.shape), dtype=et.dtype)
    qt = quant_type(t)
    if qt is not None:
        z = quantize(np.zeros(tuple(t.shape), dtype=qt.expressed_type.dtype), qt)
    return z


@kernel("stablehlo.collective_permute")
def collective_permute(ctx, op, operand):
    grid, me = _grid_of(ctx)
    raw = _groups_attr(op, "source_target_pairs")
    if not raw:          # no pairs: nobody receives anything (not "one group of everybody")
        return _zeros(op.results[0].type, op.name)
    pairs = process_groups(grid, raw, _cross_mode(op))
    participants = sorted({p for pair in pairs for p in pair})
    if me not in participants:
        return _zeros(op.results[0].type, op.name)
    got = grid.exchange(me, participants, operand)
    for src, dst in pairs:
        if dst == me:
            return got[src]
    return _zeros(op.results[0].type, op.name)


@kernel("stablehlo.collective_broadcast")
def collective_broadcast(ctx, op, *operands):
    dynamic = "has_dynamic_root" in op.attributes
    data = list(operands[:-1]) if dynamic else list(operands)
    grid, me, group = _my_group(ctx, op, _cross_mode(op))
    if group is None:
        return [_zeros(r.type, op.name) for r in op.results]
    got = grid.exchange(me, group, data)
    out = []
    for j in range(len(op.results)):
        root = group[int(np.asarray(operands[-1]).reshape(-1)[j])] if dynamic else group[0]
        out.append(got[root][j])
    return out


@kernel("stablehlo.replica_id")
def replica_id(ctx, op):
    _, me = _grid_of(ctx)
    return np.array(me[0], dtype=elem(op.results[0].type).dtype)


@kernel("stablehlo.partition_id")
def partition_id(ctx, op):
    _, me = _grid_of(ctx)
    return np.array(me[1], dtype=elem(op.results[0].type).dtype)


# ------------------------------------------------------------------ tokens, channels, feeds
def _token():
    return TOKEN


@kernel("stablehlo.after_all", "stablehlo.create_token")
def after_all(ctx, op, *tokens):
    return _token()


def _routes(op, grid):
    """The (source, target) process pairs of a device-to-device send/recv with
    `source_target_pairs` (mapped to processes like collective_permute's: cross_replica for
    channel_id <= 0, cross_partition otherwise); None for the plain channel queue (host
    transfers, or no pairs)."""
    if getattr(op.attributes.get("is_host_transfer"), "value", False):
        return None
    raw = _groups_attr(op, "source_target_pairs")
    if not raw:
        return None
    return [tuple(pair) for pair in process_groups(grid, raw, _cross_mode(op))]


@kernel("stablehlo.send")
def send(ctx, op, *args):
    grid, me = _grid_of(ctx)
    data = args[:-1]
    routes = _routes(op, grid)
    if routes is None:
        grid.send(_channel_id(op), list(data))
    else:                 # one message per pair this process is the source of
        for src, dst in routes:
            if src == me:
                grid.send((_channel_id(op), src, dst), list(data))
    return _token()


@kernel("stablehlo.recv")
def recv(ctx, op, token):
    grid, me = _grid_of(ctx)
    routes = _routes(op, grid)
    if routes is not None:
        srcs = [src for src, dst in routes if dst == me]
        if not srcs:
            raise InterpreterError(f"stablehlo.recv: process {me} is the target of none of "
                                   "source_target_pairs, so nothing can reach it")
        data = grid.recv(me, (_channel_id(op), srcs[0], me))
        return list(data) + [_token()]
    if grid.num_replicas * grid.num_partitions == 1 and not grid.channels[_channel_id(op)]:
        raise InterpreterError("stablehlo.recv outside interpreter.run_parallel: no process can send")
    data = grid.recv(me, _channel_id(op))
    return list(data) + [_token()]


@kernel("stablehlo.infeed")
def infeed(ctx, op, token):
    """The next entry of the process's host-fed queue (ProcessGrid.host_infeed), else of the
    grid's queue of functions (run_parallel's `infeed`, each called for its values)."""
    from .evaluator import coerce_argument
    grid, me = _grid_of(ctx)
    with grid.cond:
        host = grid.host_infeed.get(me)
        if host is not None:
            entry = host.popleft() if host else None
        else:
            entry = grid.infeed.popleft() if grid.infeed else None
    want = op.results[:-1]
    if entry is None:
        if host is not None:
            raise InterpreterError(f"stablehlo.infeed: process {me}'s infeed queue is empty (the host fed "
                                   "fewer values than the program reads)")
        raise InterpreterError("stablehlo.infeed: the infeed queue is empty (pass functions "
                               "with interpreter.run_parallel's `infeed` attribute)")
    if host is None:
        vals = ctx.call(entry, [])
        if len(vals) != len(want):
            raise InterpreterError(f"stablehlo.infeed: @{entry} returns {len(vals)} values, the op "
                                   f"expects {len(want)}")
        return list(vals) + [_token()]
    if len(entry) != len(want):
        raise InterpreterError(f"stablehlo.infeed: the host fed {len(entry)} value(s), the op "
                               f"expects {len(want)}")
    out = []
    for i, (v, r) in enumerate(zip(entry, want)):
        try:
            out.append(coerce_argument(v, r.type, i))
        except InterpreterError as e:
            raise InterpreterError(f"stablehlo.infeed: fed value #{i}: "
                                   f"{str(e).split(': ', 1)[-1]}") from None
    return out + [_token()]


@kernel("stablehlo.outfeed")
def outfeed(ctx, op, *args):
    grid, me = _grid_of(ctx)
    with grid.cond:
        grid.outfeed.append(list(args[:-1]))
    return _token()


@kernel("stablehlo.cross-replica-sum")
def cross_replica_sum(ctx, op, operand):
    """The legacy all-reduce with addition over the replicas of each of `replica_groups`
    (no groups: all replicas), within each partition."""
    from .elementwise import _binary
    me, group, got = _gather(ctx, op, "cross_replica", [operand])
    vals = [g[0] for g in got]
    while len(vals) > 1:           # a balanced tree of pairwise sums, each rounded once
        nxt = [_binary(op, vals[i], vals[i + 1], np.add, np.add, np.logical_or, exact=True)
               for i in range(0, len(vals) - 1, 2)]
        if len(vals) % 2:
            nxt.append(vals[-1])
        vals = nxt
    return np.asarray(vals[0]).astype(elem(op.results[0].type).dtype, copy=False)
