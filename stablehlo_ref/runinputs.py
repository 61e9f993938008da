"""Binding `.npy`/`.npz` files to a function's parameters, as `run` and `conform --program` do.

Arguments are named as the program names them: `jax.arg_info` (what `jax.export` records),
the argument's location name (`loc("x")`), its name in the text (`%x`), and always `arg_N`
(this project's convention), `argN` and `arr_N` (what `np.savez(a, b)` writes). An `.npz`
whose keys are all such names binds by name, in any order; otherwise the error lists the
names that were expected. Each array's shape and dtype are checked from its header before its
data is read. The dtype must be the parameter's exactly, unless `cast`: an f64 array for an f32
parameter is refused (naming the argument), since a silent cast changes the numbers. Raw-byte
arrays (`|V2`: how numpy saves bfloat16 when ml_dtypes is not loaded) are reinterpreted as
the parameter's element type when the sizes agree."""
from __future__ import annotations

from typing import List, Optional, Sequence

import numpy as np

from .errors import UsageError
from .npio import ArrayEntry, open_arrays


def argument_names(func) -> List[List[str]]:
    """For each parameter of a func.func op, the names it can be given by (best first)."""
    ft = func.attributes["function_type"].type
    n = len(ft.inputs)
    arg_attrs = func.attributes.get("arg_attrs")
    dicts = list(getattr(arg_attrs, "elements", ()) or ())
    blocks = func.regions[0].blocks if func.regions and func.regions[0].blocks else []
    block = blocks[0] if blocks else None
    out = []
    for i in range(n):
        names: List[str] = []
        d = dicts[i] if i < len(dicts) else None
        for k, v in getattr(d, "entries", ()) or ():
            if k == "jax.arg_info" and isinstance(getattr(v, "value", None), str) and v.value:
                names.append(v.value)
        if block is not None and i < len(block.arguments):
            loc = block.arg_locations[i] if i < len(block.arg_locations) else None
            ln = getattr(loc, "name", None)
            if isinstance(ln, str) and ln and ln not in names:
                names.append(ln)
            vn = block.arguments[i].name
            if vn and not (vn.startswith("arg") and vn[3:].isdigit()) and vn not in names:
                names.append(vn)
        for alias in (f"arg_{i}", f"arg{i}", f"arr_{i}"):
            if alias not in names:
                names.append(alias)
        out.append(names)
    return out


def _describe(names: List[str]) -> str:
    return names[0]


def bind_npz(entries: List[ArrayEntry], names: List[List[str]], where: str, entry: str) -> List[ArrayEntry]:
    """Order the arrays of an .npz by parameter, by name."""
    by_alias = {}
    for i, ns in enumerate(names):
        for a in ns:
            by_alias.setdefault(a, i)
    slots: List[Optional[ArrayEntry]] = [None] * len(names)
    unknown = []
    for e in entries:
        i = by_alias.get(e.key)
        if i is None:
            unknown.append(e.key)
        elif slots[i] is not None:
            raise UsageError(f"{where}: arrays {slots[i].key!r} and {e.key!r} both name argument #{i} "
                             f"({_describe(names[i])}) of @{entry}")
        else:
            slots[i] = e
    expected = ", ".join(_describe(ns) for ns in names) or "none"
    if unknown:
        raise UsageError(f"{where}: array(s) {', '.join(repr(k) for k in unknown)} name no argument of "
                         f"@{entry}; expected {expected} (or arg_0 .. arg_{max(len(names) - 1, 0)})")
    missing = [i for i, s in enumerate(slots) if s is None]
    if missing:
        raise UsageError(f"{where}: no array for argument(s) {', '.join(_describe(names[i]) for i in missing)} "
                         f"of @{entry}; expected {expected}")
    return slots


def check_and_load(e: ArrayEntry, t, label: str, cast: bool, limits=None) -> np.ndarray:
    """Check one array (from its header) against parameter type `t`, then read it."""
    from .interpreter.evaluator import coerce_argument
    from .errors import InterpreterError
    from .ir.types import TensorType, elem
    from . import limits as _limits
    lim = limits or _limits.DEFAULT
    _limits.check_tensor(e.shape, e.dtype.itemsize * 8, f"{e.where}", limits=lim)
    if not isinstance(t, TensorType):
        raise UsageError(f"{label}: a {t} parameter cannot be given as an array")
    if len(t.shape) != len(e.shape) or any(d is not None and d != s for d, s in zip(t.shape, e.shape)):
        raise UsageError(f"{label}: {e.where} has shape {e.shape}; the parameter is {t}")
    et = elem(t, storage=True)
    want = np.dtype(et.dtype)
    if e.dtype.kind == "V":
        if e.dtype.itemsize != want.itemsize:
            raise UsageError(f"{label}: {e.where} holds raw {e.dtype.itemsize}-byte elements ({e.dtype}); "
                             f"the parameter is {t}")
        return e.load().view(want)
    if e.dtype != want and not cast:
        raise UsageError(f"{label}: {e.where} is {e.dtype}; the parameter is {t} ({want}); "
                         f"save it as {want} or pass --cast")
    arr = e.load()
    if cast and arr.dtype != want:
        try:
            arr = coerce_argument(arr, t, 0)
        except InterpreterError as err:
            raise UsageError(f"{label}: {err.message.split(': ', 1)[-1]}") from None
        except (TypeError, ValueError) as err:
            raise UsageError(f"{label}: cannot cast {e.dtype} to {want}: {err}") from None
    return arr


def load_arguments(func, entry: str, inputs: Sequence[tuple], cast: bool = False, limits=None) -> list:
    """`inputs`: (bytes, file name, is_npz_option) per --input/--inputs file, in order. Returns
    the argument values, each checked against its parameter before its data is read."""
    from .interpreter.registry import TOKEN
    from .ir.types import TokenType
    ft = func.attributes["function_type"].type
    all_params = list(ft.inputs)
    all_names = argument_names(func)
    # token parameters take no array: they get a token
    data_idx = [i for i, t in enumerate(all_params) if not isinstance(t, TokenType)]
    params = [all_params[i] for i in data_idx]
    names = [all_names[i] for i in data_idx]
    chosen: List[ArrayEntry] = []
    for data, name, npz_option in inputs:
        es = open_arrays(data, name)
        if npz_option:
            if es and es[0].key is None:
                raise UsageError(f"{name}: is a .npy array, not an .npz archive (pass it with --input)")
            if chosen:
                raise UsageError("give arguments either with --input or with one --inputs archive")
            chosen = bind_npz(es, names, name, entry)
        else:
            if es and es[0].key is not None or not es:
                raise UsageError(f"{name}: is an .npz archive, not a .npy array (pass it with --inputs)")
            chosen.append(es[0])
    if len(chosen) != len(params):
        tokens = len(all_params) - len(params)
        extra = f" besides {tokens} token(s)" if tokens else ""
        raise UsageError(f"@{entry} takes {len(params)} argument(s){extra} ({', '.join(str(t) for t in params)}); "
                         f"{len(chosen)} given")
    out = [TOKEN] * len(all_params)
    for k, (e, t) in enumerate(zip(chosen, params)):
        i = data_idx[k]
        label = f"argument #{i} ({_describe(all_names[i])}) of @{entry}"
        out[i] = check_and_load(e, t, label, cast, limits)
    return out
