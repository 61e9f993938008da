"""User programs as conformance cases, with this project's reference interpreter as the oracle.

`program_case(program, entry, inputs | seed)` turns one StableHLO program (a `Module`, its
text, or a path to text / a portable artifact / a `jax.export` payload) into a `Case`: the
entry function becomes `@main`, the inputs are the given arrays or random ones drawn from
the entry's signature, and the expected outputs are what the reference interpreter
computes. `run_program(backend, ...)` runs that case on a backend and returns the usual
report.

Outputs are compared per element type (`program_rule`): integers and booleans exactly;
floats (complex: per part) pass when within `max_ulp` ULP **or** within
`atol + rtol * |expected|`; NaN equals NaN, infinities must match. The defaults allow for a
backend that sums, dots or reduces in another order (or fuses `a * b + c`), not for a wrong
result:

| element type | rtol | atol | max_ulp |
| --- | --- | --- | --- |
| f64 | 1e-10 | 1e-10 | 64 |
| f32 | 1e-5 | 1e-5 | 64 |
| f16 | 1e-2 | 1e-3 | 4 |
| bf16 | 2e-2 | 1e-2 | 4 |
| f8, f6, f4 types | 0.25 | 0.125 | 2 |
"""
from __future__ import annotations

import os
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from stablehlo_ref.errors import StableHLOError, UsageError

from .cases import TRIVIAL_OPS, Case, Rule, _reachable

# (rtol, atol, max_ulp) per float element type; narrow floats not listed use NARROW
FLOAT_TOLERANCES = {
    "f64": (1e-10, 1e-10, 64),
    "f32": (1e-5, 1e-5, 64),
    "tf32": (1e-3, 1e-3, 4),
    "f16": (1e-2, 1e-3, 4),
    "bf16": (2e-2, 1e-2, 4),
}
NARROW = (0.25, 0.125, 2)


def program_rule(et_name: str, rtol: Optional[float] = None, atol: Optional[float] = None,
                 max_ulp: Optional[int] = None) -> Rule:
    """The comparison rule for one output of a user program, by its element type
    (`complex<f32>` uses f32's). Integers and booleans: exact."""
    from stablehlo_ref.ir.types import ELEMENT_TYPES
    et = ELEMENT_TYPES.get(et_name)
    if et is None or not (et.is_float or et.is_complex):
        return Rule("exact", check="program")
    part = et_name
    if et.is_complex:
        part = "f32" if et_name == "complex<f32>" else "f64"
    r, a, u = FLOAT_TOLERANCES.get(part, NARROW)
    return Rule("close", atol=a if atol is None else float(atol), max_ulp=u if max_ulp is None else int(max_ulp),
                rtol=r if rtol is None else float(rtol), check="program")


def _load_module(program, name: str = "<program>"):
    from stablehlo_ref import load
    from stablehlo_ref.ir.core import Module
    from stablehlo_ref.text import parse
    if isinstance(program, Module):
        from stablehlo_ref.text import print_module
        return parse(print_module(program), name)       # a copy: it is rewritten
    if isinstance(program, (bytes, bytearray)):
        from stablehlo_ref import load_bytes
        return load_bytes(bytes(program), name)
    if isinstance(program, os.PathLike) or (isinstance(program, str) and "\n" not in program
                                            and os.path.exists(program)):
        return load(program)
    return parse(program, name)


def _static_tensor(t, where: str):
    from stablehlo_ref.ir.types import TensorType
    if not isinstance(t, TensorType):
        raise UsageError(f"{where} has type {t}: only tensor arguments and results can be compared")
    if any(d is None for d in t.shape):
        raise UsageError(f"{where} has a dynamic shape ({t}): give --inputs, sizes for its symbolic "
                         "dimensions (--dim NAME=SIZE), or a program with static shapes")
    return t


def parse_dims(specs: Sequence[str]) -> Dict[str, int]:
    """`["b=5", "arg0.1=3"]` -> {"b": 5, "arg0.1": 3} (the `--dim` flag's values)."""
    out = {}
    for spec in specs or ():
        name, eq, size = spec.partition("=")
        name = name.strip()
        try:
            n = int(size)
        except ValueError:
            n = -1
        if not eq or not name or n < 0:
            raise UsageError(f"--dim {spec!r}: expected NAME=SIZE with a size >= 0 (e.g. --dim b=5)")
        out[name] = n
    return out


def _defining_arg_dim(value, block) -> Optional[Tuple[int, int]]:
    """(argument index, dimension) when `value` is `get_dimension_size` of an argument of
    `block`, possibly through converts and reshapes; else None."""
    for _ in range(16):
        op = value.owner
        if op is None or op is block or not hasattr(op, "operands"):
            return None
        if op.name == "stablehlo.get_dimension_size":
            src = op.operands[0]
            if src.owner is block:
                return src.index, int(op.attributes["dimension"].value)
            return None
        if op.name not in ("stablehlo.convert", "stablehlo.reshape") or len(op.operands) != 1:
            return None
        value = op.operands[0]
    return None


def symbolic_dims(module, entry: str) -> Dict[str, List[Tuple[int, int]]]:
    """The symbolic dimensions of a `jax.export` shape-polymorphic program: each dimension
    variable's name (the `jax.global_constant` attribute of the parameter the entry passes
    it in) -> the (argument, dimension) pairs of the entry whose size it is."""
    fns = module.functions
    func = fns[entry]
    block = func.regions[0].blocks[0]
    out: Dict[str, List[Tuple[int, int]]] = {}
    for op in block.operations:
        if op.name != "func.call":
            continue
        callee = fns.get(getattr(op.attributes.get("callee"), "root", None))
        arg_attrs = callee.attributes.get("arg_attrs") if callee is not None else None
        if arg_attrs is None:
            continue
        for k, operand in enumerate(op.operands):
            entries = dict(getattr(arg_attrs.elements[k], "entries", ())) if k < len(arg_attrs.elements) else {}
            name = getattr(entries.get("jax.global_constant"), "value", None)
            if not isinstance(name, str) or not name:
                continue
            where = _defining_arg_dim(operand, block)
            if where is not None and where not in out.setdefault(name, []):
                out[name].append(where)
    return out


def resolve_dims(module, entry: str, types: Sequence, dims: Mapping[str, int]) -> Dict[Tuple[int, int], int]:
    """(argument, dimension) -> size for the `?` dimensions of the entry's arguments, from
    `dims`: names of jax's dimension variables (`b=5`) or `argI.D=SIZE`. Raises UsageError for
    a name the program does not have."""
    named = symbolic_dims(module, entry) if dims else {}
    out: Dict[Tuple[int, int], int] = {}
    for name, size in dims.items():
        if name.startswith("arg") and "." in name:
            i, _, d = name[3:].partition(".")
            if i.isdigit() and d.isdigit():
                out[(int(i), int(d))] = size
                continue
        if name not in named:
            have = ", ".join(sorted(named)) or "none (use argI.D=SIZE for argument I's dimension D)"
            raise UsageError(f"--dim {name}: the program has no symbolic dimension {name!r} "
                             f"(symbolic dimensions: {have})")
        for where in named[name]:
            out[where] = size
    return out


def random_inputs(types: Sequence, seed: int,
                  sizes: Optional[Mapping[Tuple[int, int], int]] = None) -> List[np.ndarray]:
    """Deterministic random arrays for the given tensor types: booleans uniform; signed
    integers in [-8, 8] and unsigned in [0, 16] (clipped to the type's range); floats uniform
    in [-1, 1] rounded to the type; complex numbers with both parts so; quantized tensors get
    random storage values in their storage range (clipped to [-8, 8] / [0, 16] as well).
    A dynamic (`?`) dimension takes its size from `sizes[(argument, dimension)]`."""
    from stablehlo_ref.interpreter.numerics import elem
    from stablehlo_ref.ir.types import ELEMENT_TYPES, TensorType
    rng = np.random.default_rng(int(seed))
    sizes = sizes or {}
    out = []
    for i, t in enumerate(types):
        if isinstance(t, TensorType) and any(d is None for d in t.shape):
            t = TensorType(tuple(sizes.get((i, k), d) if d is None else d for k, d in enumerate(t.shape)),
                           t.element_type, getattr(t, "encoding", None))
        _static_tensor(t, f"argument #{i}")
        shape = tuple(int(d) for d in t.shape)
        et = elem(t)
        if et.is_bool:
            a = rng.integers(0, 2, size=shape).astype(bool)
        elif et.is_integer:
            if et.is_unsigned:
                lo, hi = 0, min(16, 2 ** et.bits - 1)
            else:
                lo, hi = max(-8, -(2 ** (et.bits - 1))), min(8, 2 ** (et.bits - 1) - 1)
            qmin = getattr(t.element_type, "storage_min", None)
            qmax = getattr(t.element_type, "storage_max", None)
            lo = max(lo, qmin) if qmin is not None else lo
            hi = min(hi, qmax) if qmax is not None else hi
            a = rng.integers(lo, hi + 1, size=shape).astype(et.dtype)
        elif et.is_complex:
            part = ELEMENT_TYPES["f32" if et.name == "complex<f32>" else "f64"]
            re = rng.uniform(-1, 1, size=shape).astype(part.dtype)
            im = rng.uniform(-1, 1, size=shape).astype(part.dtype)
            a = (re + 1j * im).astype(et.dtype)
        elif et.is_float:
            a = rng.uniform(-1, 1, size=shape).astype(et.dtype)
        else:
            raise UsageError(f"argument #{i}: no random values for element type {et.name}")
        out.append(np.asarray(a))
    return out


def _storage_view(a: np.ndarray, t) -> np.ndarray:
    """npz files keep bf16/f8 arrays as raw bytes (`V2`, `V1`): view them as the parameter's
    element type when the widths agree."""
    if a.dtype.kind == "V" and a.dtype.names is None:
        from stablehlo_ref.interpreter.numerics import elem
        from stablehlo_ref.ir.types import TensorType
        if isinstance(t, TensorType) and elem(t).dtype.itemsize == a.dtype.itemsize:
            return a.view(elem(t).dtype)
    return a


def program_case(program, entry: str = "main", inputs: Optional[Sequence] = None,
                 seed: Optional[int] = None, case_id: Optional[str] = None,
                 rtol: Optional[float] = None, atol: Optional[float] = None,
                 max_ulp: Optional[int] = None, name: str = "<program>",
                 dims: Optional[Mapping[str, int]] = None) -> Case:
    """A conformance case from a user program: function `entry` becomes `@main` (the
    functions it does not call are dropped), `inputs` (or, with `seed`, random inputs from
    its signature; `dims` sizes its symbolic dimensions: {"b": 5}) are its arguments, and the expected outputs are what the reference
    interpreter returns. Raises UsageError for a program that cannot be a case (unknown
    entry, dynamic shapes without inputs, wrong inputs, non-tensor results) and the
    interpreter's own error when the reference cannot run it."""
    from stablehlo_ref.interpreter.evaluator import Interpreter, coerce_argument
    from stablehlo_ref.interpreter.numerics import elem
    from stablehlo_ref.ir.attributes import StringAttr
    from stablehlo_ref.errors import InterpreterError
    from stablehlo_ref.text import print_module
    from stablehlo_ref.verifier import verify

    if inputs is None and seed is None:
        inputs = []
    if inputs is not None and seed is not None:
        raise UsageError("give inputs or a random seed, not both")
    module = _load_module(program, name)
    fns = module.functions
    if entry not in fns:
        have = ", ".join("@" + n for n in fns) or "none"
        raise UsageError(f"the program has no function @{entry} (functions: {have})")
    keep = _reachable(module, entry)
    if entry != "main" and "main" in keep:
        raise UsageError(f"@{entry} calls @main: run @main, or rename it")
    for n in list(fns):
        if n not in keep:
            module.body.operations.remove(fns[n])
    func = fns[entry]
    ft = func.attributes["function_type"].type
    from stablehlo_ref.ir.types import TensorType
    for i, t in enumerate(ft.results):
        if not isinstance(t, TensorType):
            raise UsageError(f"result #{i} of @{entry} has type {t}: only tensor results can be compared")
    if seed is not None:
        inputs = random_inputs(ft.inputs, seed, resolve_dims(module, entry, ft.inputs, dims or {}))
    elif dims:
        raise UsageError("--dim goes with --random-inputs")
    inputs = [_storage_view(np.asarray(a), t) for a, t in zip(inputs, ft.inputs)] + \
        [np.asarray(a) for a in inputs[len(ft.inputs):]]
    if len(inputs) != len(ft.inputs):
        raise UsageError(f"@{entry} takes {len(ft.inputs)} argument(s) "
                         f"({', '.join(str(t) for t in ft.inputs)}); {len(inputs)} given")
    try:
        args = [coerce_argument(a, t, i) for i, (a, t) in enumerate(zip(inputs, ft.inputs))]
    except InterpreterError as e:
        raise UsageError(str(e)) from None
    except (TypeError, ValueError) as e:
        raise UsageError(f"an argument cannot be passed as its parameter type: {e}") from None
    verify(module)
    outs = [np.asarray(o) for o in Interpreter(module).call(entry, args)]
    for op in module.walk():            # the interpreter caches plans on ops and blocks
        op._cache = None
        for r in op.regions:
            for b in r.blocks:
                b._cache = None
    ets = [elem(t).name for t in ft.results]
    ops = sorted({op.name for n in keep for op in fns[n].walk() if op.name not in TRIVIAL_OPS})
    func.attributes["sym_name"] = StringAttr("main")
    func.attributes.pop("sym_visibility", None)
    return Case(case_id or f"program@{entry}", print_module(module), args, outs, ets,
                [program_rule(e, rtol, atol, max_ulp) for e in ets],
                [str(i) for i in range(len(outs))], ["reference"] * len(outs), tuple(ops))


def run_program(backend, program, entry: str = "main", inputs: Optional[Sequence] = None,
                seed: Optional[int] = None, timeout: Optional[float] = 60.0, **tolerances):
    """Run one user program on `backend` and compare every output with the reference
    interpreter's (see `program_case`); returns a `Report` with one case."""
    from .runner import run_suite
    case = program_case(program, entry, inputs=inputs, seed=seed, **tolerances)
    return run_suite(backend, [case], timeout=timeout)
