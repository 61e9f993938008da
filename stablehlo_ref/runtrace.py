"""Watching a run op by op: `shlo.run(..., trace=callback)` and `run`'s --trace, --trace-op,
--trace-first, --probe and progress line. One hook mechanism: the interpreter's traced path
calls `_trace(op, results)` after each op; `HookedInterpreter` passes that to callbacks."""
from __future__ import annotations

import os
import sys
from typing import Callable, List, Optional, Sequence

import numpy as np

from .interpreter.evaluator import Interpreter

Hook = Callable[[object, list], None]


class HookedInterpreter(Interpreter):
    """An Interpreter that calls each hook with (op, list of result values) after every op
    (through the interpreter's `trace` argument, which takes a function trace(op, results))."""

    def __init__(self, module, hooks: Sequence[Hook], **kw):
        self.hooks = list(hooks)
        super().__init__(module, trace=self._dispatch, **kw)

    def _dispatch(self, op, values):
        for h in self.hooks:
            h(op, values)


def format_value(v) -> str:
    """A short plain summary of a value: `f32[2, 3] [1. 2. 3. 4. 5. 6.]` (numbers as numpy
    prints arrays, never `np.True_`), `token`, or a tuple of summaries."""
    if isinstance(v, (tuple, list)):
        return "(" + ", ".join(format_value(x) for x in v) + ")"
    if v.__class__.__name__ == "Token":
        return "token"
    a = np.asarray(v)
    if a.dtype.hasobject:
        return type(v).__name__
    flat = a.reshape(-1)[:6]
    body = np.array2string(flat, threshold=6, max_line_width=10 ** 6)
    if a.size > 6:
        body = body[:-1] + " ...]"
    return f"{a.dtype}{list(a.shape)} {body[:100]}"


def trace_printer(stream, ops: Optional[Sequence[str]] = None, first: Optional[int] = None) -> Hook:
    """`file:line:col: op.name -> results` per op, optionally only ops named in `ops` (short
    names mean stablehlo.NAME) and only the first `first` executions of each op."""
    wanted = None
    if ops:
        wanted = {o if "." in o else f"stablehlo.{o}" for o in ops}
    seen: dict = {}

    def hook(op, values):
        if wanted is not None and op.name not in wanted:
            return
        if first is not None:
            n = seen.get(id(op), 0)
            if n >= first:
                return
            seen[id(op)] = n + 1
        print(f"{op.where()}: {op.name} -> {'; '.join(format_value(v) for v in values)}", file=stream)
    return hook


def probe_writer(directory: str) -> Hook:
    """Every op's results as DIR/NNNNNN_<op>_<i>.npy, with DIR/probe.tsv listing
    file, op and location (upstream's --probe-output-dir, for every op)."""
    from .errors import UsageError
    try:
        os.makedirs(directory, exist_ok=True)
        index = open(os.path.join(directory, "probe.tsv"), "w", encoding="utf-8")
    except OSError as e:
        raise UsageError(f"--probe {directory}: {e.strerror}") from None
    index.write("file\top\tlocation\n")
    count = [0]

    def hook(op, values):
        count[0] += 1
        short = op.name.replace(".", "_")
        for i, v in enumerate(values):
            if isinstance(v, (tuple, list)) or v.__class__.__name__ == "Token":
                continue
            name = f"{count[0]:06d}_{short}_{i}.npy"
            try:
                np.save(os.path.join(directory, name), np.asarray(v), allow_pickle=False)
            except OSError as e:
                raise UsageError(f"--probe {directory}: {e.strerror}") from None
            index.write(f"{name}\t{op.name}\t{op.where()}\n")
        index.flush()
    hook.close = index.close
    return hook


def _loop_body_heads(module) -> set:
    """ids of the first op of every `while` body (one execution = one loop iteration)."""
    heads = set()
    for op in module.walk():
        if op.name == "stablehlo.while" and len(op.regions) > 1 and op.regions[1].blocks:
            ops = op.regions[1].blocks[0].operations
            if ops:
                heads.add(id(ops[0]))
    return heads


def progress_hook(module, stream):
    """A tqdm progress line (ops executed, loop iterations) shown once a run takes a second."""
    from tqdm import tqdm
    bar = tqdm(total=None, unit=" ops", file=stream, delay=1.0, leave=False, dynamic_ncols=True)
    heads = _loop_body_heads(module)
    state = [0, 0]            # ops not yet reported, loop iterations

    def hook(op, values):
        state[0] += 1
        if id(op) in heads:
            state[1] += 1
        if state[0] >= 256:
            bar.update(state[0])
            state[0] = 0
            if heads:
                bar.set_postfix_str(f"{state[1]} loop iterations", refresh=False)
    hook.close = bar.close
    return hook


def run_with_hooks(module, entry: str, args: list, opts, limits=None) -> list:
    """Run `entry` for the CLI with the hooks its options ask for, within `limits`."""
    hooks: List[Hook] = []
    if getattr(opts, "trace", False):
        hooks.append(trace_printer(sys.stderr, opts.trace_op, opts.trace_first))
    if getattr(opts, "probe", None):
        hooks.append(probe_writer(opts.probe))
    if _is_terminal(sys.stderr):
        try:
            hooks.append(progress_hook(module, sys.stderr))
        except ImportError:          # tqdm is a core dependency; a broken install runs without
            pass
    try:
        if not hooks:
            return Interpreter(module, limits=limits).call(entry, args)
        return HookedInterpreter(module, hooks, limits=limits).call(entry, args)
    finally:
        for h in hooks:
            close = getattr(h, "close", None)
            if close:
                close()


def _is_terminal(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):
        return False
