"""`while` loops of rank-0 values (and arrays read and written one element at a time), run
on numpy scalars.

A loop whose carried values, and every value its condition and body make (calls inlined),
are rank-0 tensors of an admitted element type, and whose ops are on the whitelist below
(`ADMITTED`: (op, element type) pairs) or elementwise / chlo ops of one or two operands
(run by their general kernels on rank-0 arrays, `_kernel_function`), runs here: each value
is a numpy scalar of
exactly its element type's dtype (np.float32, np.int32, np.bool_, ...; never a Python number,
so numpy promotes nothing), each op a numpy scalar operator or a small function of them,
stored in a flat list of slots, the whole loop one Python loop over tuples of
(function, operand slots, result slot) (`_fast_loop`: the first few of them in the loop's
own code, and a counted loop run for its known number of iterations with no condition
computed; after 200 iterations the loop is written as one Python function,
`scalar_codegen`). Constants, and ops of constants only, are computed once by the general kernels
when the loop is compiled. In a counted loop, carried integers stepped by a known constant
whose values only integer and boolean ops read (the loop's counter, JAX's `i % 3 == 0` of it)
are computed for all iterations at once, in arrays, before the loop (`_induction_slice`); the
body stores the values of that slice it reads each iteration. An f32 sine, cosine or tanh
whose readers are all f32 add/subtract/multiply/divide of an np.float32 is left a Python
float those operators round to f32 (`_unrounded`). A unary float op calls math's function of a
Python float in place of the ufunc (ten times cheaper on one value) where, on this machine,
the two give the same bits on a fixed sample of values (`_math_twin`: a ufunc dispatched to a
vectorized library rounds differently, and keeps the ufunc).

Every admitted pair computes the bits the general kernel computes on rank-0 arrays (wrapping
integers, the spec's integer division and remainder cases, f32 computed through f64 and
rounded once where the general kernel does so); tests/test_scalar_loops.py compares them on
random and edge values. Integer scalar operators wrap under the quiet error state the
evaluator runs in (numpy warns of overflow otherwise): a loop runs here only in that state.

Carried arrays (rank >= 1, static shape, an admitted element type) may ride along where the
loop only reads and writes them one element at a time, as JAX's `scan` over `xs` into `ys`
with a rank-0 carry does: a `dynamic_slice` of one element is the numpy scalar at the start
indices clamped into the array (a reshape or broadcast between shapes of one element is the
same scalar), a `dynamic_update_slice` of one element stores it there in place, in a copy of
the array the loop makes when it starts (the caller's array is never written). Each store
makes a new version of the array; reading an older version afterwards, returning an array
in another carried value's place, or storing inside a `case` branch keeps the loop on the
general path. A `case` on a rank-0 index whose branches compute (JAX's `lax.cond` in a loop)
computes every branch, where their ops are admitted pairs (pure: they cannot fail), and
selects the results on the index (0 the first branch, ..., the last for any index out of
range); a branch with an op run by its general kernel keeps the general path.

A loop with any other op (with regions or several results, rng, collectives, custom calls),
type, or a value from outside its regions is not compiled here
(`scalar_loop` returns None, decided once per op), and neither is a traced run."""
from __future__ import annotations

import itertools
import math
import operator

import numpy as np

from ..errors import InterpreterError, StableHLOError
from ..ir.types import ElementType, TensorType
from ..ir.types import element_type
from .elementwise import (_UNARY_KERNELS, _WEAK_PYTHON_FLOATS, _exact_cast, _wrapping_cast,
                          convert_specialized)
from .jax_idioms import _Graph, _match_mod
from .plan import _CMP, _CMP_I1, _eq_i1   # compares as the compiled sequences run them
from .registry import KERNELS, op_cache
from . import scalar_codegen

# element type name -> numpy scalar type (f16, bf16 and the narrow floats are not admitted)
SCALAR_TYPES = {"i1": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32,
                "i64": np.int64, "ui8": np.uint8, "ui16": np.uint16, "ui32": np.uint32,
                "ui64": np.uint64, "f32": np.float32, "f64": np.float64}
_SIGNED = ("i8", "i16", "i32", "i64")
_UNSIGNED = ("ui8", "ui16", "ui32", "ui64")
_INTS = _SIGNED + _UNSIGNED
_FLOATS = ("f32", "f64")

# unary float ops computed as the general kernel computes a rank-0 array: the ufunc in f64,
# rounded once to the type
_UNARY_FLOAT = ("stablehlo.logistic", "stablehlo.rsqrt", "stablehlo.exponential_minus_one",
                "stablehlo.log_plus_one", "stablehlo.abs",
                "stablehlo.sine", "stablehlo.cosine", "stablehlo.tan", "stablehlo.exponential",
                "stablehlo.log", "stablehlo.tanh", "stablehlo.sqrt", "stablehlo.cbrt",
                "stablehlo.floor", "stablehlo.ceil", "stablehlo.round_nearest_even")

# unary float ops whose kernels compute `from_compute(ufunc(to_compute(x)))` as those of
# `_UNARY_KERNELS` do (their complex forms aside)
_OTHER_UNARY = {"stablehlo.exponential_minus_one": np.expm1,
                "stablehlo.log_plus_one": np.log1p, "stablehlo.abs": np.abs}

# the whitelist: op name -> the element types (of its operands; compare: of its operands,
# select: of its result) it runs on here
ADMITTED = {
    "stablehlo.add": _INTS + _FLOATS,
    "stablehlo.subtract": _INTS + _FLOATS,
    "stablehlo.multiply": _INTS + _FLOATS,
    "stablehlo.divide": _INTS + _FLOATS,
    "stablehlo.remainder": _INTS + _FLOATS,
    "stablehlo.maximum": _INTS + _FLOATS,
    "stablehlo.minimum": _INTS + _FLOATS,
    "stablehlo.power": _FLOATS,
    "stablehlo.atan2": _FLOATS,
    "stablehlo.and": ("i1",) + _INTS,
    "stablehlo.or": ("i1",) + _INTS,
    "stablehlo.xor": ("i1",) + _INTS,
    "stablehlo.not": ("i1",) + _INTS,
    "stablehlo.negate": _SIGNED + _FLOATS,
    "stablehlo.compare": ("i1",) + _INTS + _FLOATS,
    "stablehlo.select": ("i1",) + _INTS + _FLOATS,
    **{name: _FLOATS for name in _UNARY_FLOAT},
    # (of its operand; the result any admitted type)
    "stablehlo.convert": ("i1",) + _INTS + _FLOATS,
}

# ops whose every operand is a known constant are computed by the general kernel when the
# loop is compiled; these are never run here otherwise
_CONSTANT = "stablehlo.constant"
_CALL = "func.call"
_CASE = "stablehlo.case"
_MAX_OPS = 2000            # ops of a loop (calls inlined) compiled here at most
_MAX_DEPTH = 8             # calls inlined this deep at most
_BUILTIN = type(operator.add)
_SELECT = -3               # entry kind: a select (f[out] = f[b] if f[a] else f[c])


def _admitted_name(et):
    """The name of element type `et` where it is admitted here (`SCALAR_TYPES`), or None."""
    if et.__class__ is not ElementType or et.name not in SCALAR_TYPES:
        return None
    return et.name


def scalar_type(t):
    """The element type name of a rank-0 tensor type of an admitted element type, or None."""
    if t.__class__ is not TensorType or t.shape != () or t.encoding is not None:
        return None
    return _admitted_name(t.element_type)


def one_type(t):
    """The element type name of a static tensor type of one element (rank 0, or every dim
    1) of an admitted element type, or None: such a value is one numpy scalar here."""
    if t.__class__ is not TensorType or t.encoding is not None:
        return None
    for d in t.shape:
        if d != 1:
            return None
    return _admitted_name(t.element_type)


def buffer_type(t):
    """(element type name, shape) of a static tensor type of rank >= 1 and at least one
    element of an admitted element type (a carried array the loop reads and writes one
    element at a time: `_Compiler.read`, `_Compiler.write`), or None."""
    if t.__class__ is not TensorType or t.encoding is not None or not t.shape:
        return None
    shape = t.shape
    for d in shape:
        if d is None or d < 1:
            return None
    name = _admitted_name(t.element_type)
    return None if name is None else (name, tuple(shape))


# ------------------------------------------------------------------ the admitted functions
# each takes two numpy scalars (a unary op ignores its second) and returns one

def _max_int(a, b):
    return a if a >= b else b


def _min_int(a, b):
    return a if a <= b else b


# float add and multiply: numpy's scalar operators `x + y`, `x * y` of two NaNs give the
# second operand's payload, its ufuncs on arrays (the general kernel) the first's; the entries
# of these run the operator on the swapped operands (`_SWAPPED`: the same value otherwise,
# both ops commute in IEEE arithmetic)
def _add_float(a, b):
    return b + a


def _mul_float(a, b):
    return b * a


_SWAPPED = {_add_float: operator.add, _mul_float: operator.mul}


def _not(a, _):
    return ~a


def _neg(a, _):
    return -a


def _first(a, _):
    return a


# entry functions of one operand as the prefix operator scalar_codegen writes
_PREFIX = {_not: "~", _neg: "-", _first: ""}


def _int_rem(scalar, signed):
    """Remainder of numpy integer scalars: truncated (the sign of the dividend); x % 0 = x;
    INT_MIN % -1 = 0 (numpy's floored % gives 0 there)."""
    if signed:
        def rem(a, b):
            if not b:
                return a
            r = a % b                    # floored: the sign of b
            if r and (r < 0) ^ (a < 0):
                r = r - b                # |r - b| < |b|: no overflow
            return r
    else:
        def rem(a, b):
            if not b:
                return a
            return a % b
    return rem


def _int_div(scalar, signed):
    """Division of numpy integer scalars truncated toward zero; x / 0 = -1 (all ones
    unsigned); INT_MIN / -1 = INT_MIN (0 - a wraps)."""
    if not signed:
        ones = scalar(np.iinfo(scalar).max)

        def udiv(a, b):
            if not b:
                return ones
            return a // b
        return udiv
    minus_one = scalar(-1)
    zero = scalar(0)

    def div(a, b):
        if not b:
            return minus_one
        if b == minus_one:
            return zero - a              # (wraps for INT_MIN)
        q = a // b                       # floored; truncate toward zero
        if (a < 0) ^ (b < 0) and a % b:
            q = q + 1
        return q
    return div


# math's functions of Python floats beside the ufuncs of f64 arrays they may stand in for (a
# ufunc called on one Python float costs ~0.4 us, math's function ~0.04 us)
_MATH_FORMS = {np.sin: math.sin, np.cos: math.cos, np.tan: math.tan, np.tanh: math.tanh,
               np.exp: math.exp, np.log: math.log, np.sqrt: math.sqrt, np.expm1: math.expm1,
               np.log1p: math.log1p, np.arctan: math.atan, np.sinh: math.sinh,
               np.cosh: math.cosh}
_MATH_TWINS = {}
# what math raises for a value it will not compute (a domain error, an overflow, x % 0)
_REJECTED = (ValueError, OverflowError, ZeroDivisionError)


def _twin_sample():
    """The f64 values `_math_twin` compares the two functions on (fixed: the same on every
    machine)."""
    rng = np.random.default_rng(20261207)
    return np.concatenate([
        rng.uniform(-4, 4, 3000), rng.uniform(-100, 100, 1000), rng.uniform(-1e6, 1e6, 300),
        np.exp(rng.uniform(-700, 700, 500)), -np.exp(rng.uniform(-700, 700, 300)),
        rng.standard_normal(1000) * 1e-8, np.linspace(-1, 1, 401),
        np.array([0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 709.0, 710.0, -745.0, 1e-310, -1e-310])])


def _same_bits(twin, ufunc, columns):
    """Whether `twin` on the Python floats of each row of the f64 `columns` gives the bits
    `ufunc` gives on the arrays, at every row `twin` does not reject."""
    with np.errstate(all="ignore"):
        want = ufunc(*columns)
    got = []
    taken = []
    for row in zip(*[c.tolist() for c in columns]):
        try:
            got.append(twin(*row))
            taken.append(True)
        except _REJECTED:
            got.append(0.0)
            taken.append(False)
    taken = np.array(taken, dtype=bool)
    return np.array_equal(np.array(got, dtype=np.float64).view(np.int64)[taken],
                          want.view(np.int64)[taken])


def _math_twin(ufunc):
    """math's function standing in for `ufunc` on one Python float: where, on this machine,
    it gives the very bits the ufunc gives on an f64 array (the general kernel's form) for
    every value of `_twin_sample` (a ufunc dispatched to a vectorized library, as numpy
    does on some CPUs, rounds differently in a few percent of values: then None, and the
    ufunc is called). Values math rejects (`_REJECTED`: a domain error, an overflow) are
    left to the ufunc by the caller, as are NaNs. A sample, not a proof: an implementation
    differing on a tiny fraction of values would pass it."""
    twin = _MATH_TWINS.get(ufunc, False)
    if twin is False:
        twin = _MATH_FORMS.get(ufunc)
        if twin is not None and not _same_bits(twin, ufunc, (_twin_sample(),)):
            twin = None
        _MATH_TWINS[ufunc] = twin
    return twin


# and of two Python floats
_MATH_FORMS2 = {np.power: math.pow, np.arctan2: math.atan2, np.fmod: math.fmod}


def _math_twin2(ufunc):
    """`_math_twin` for a binary ufunc: math's function where it gives the ufunc's bits on
    every pair of a fixed sample (the values math rejects left to the ufunc)."""
    twin = _MATH_TWINS.get(ufunc, False)
    if twin is False:
        twin = _MATH_FORMS2.get(ufunc)
        if twin is not None:
            a = _twin_sample()
            b = np.roll(a, 1) * np.random.default_rng(7).uniform(-2, 2, a.size)
            a = np.concatenate([a, np.abs(a)])
            b = np.concatenate([b, np.random.default_rng(8).uniform(-40, 40, b.size)])
            if not _same_bits(twin, ufunc, (a, b)):
                twin = None
        _MATH_TWINS[ufunc] = twin
    return twin


def _unary_float(ufunc, et):
    """A unary float op as `_unary_kernel` computes a rank-0 array: the ufunc on the value in
    f64 (a Python float is that value), rounded once to the type. Where math's function
    gives the same bits (`_math_twin`) it is called instead, the ufunc kept for NaNs and the
    values math rejects."""
    twin = _math_twin(ufunc)
    if et == "f64":
        if twin is not None:
            f64 = np.float64

            def unary64_math(x, _):
                v = float(x)
                if v == v:
                    try:
                        return f64(twin(v))
                    except _REJECTED:
                        pass
                return ufunc(v)
            return unary64_math

        def unary64(x, _):
            return ufunc(float(x))
        return unary64
    if _WEAK_PYTHON_FLOATS:
        # (numpy 2 converts a Python float operand to the f32 operand's type, one rounding;
        # times 1 is exact)
        one = np.float32(1)
        if twin is not None:
            def unary32_math(x, _):
                v = float(x)
                if v == v:
                    try:
                        return one * twin(v)
                    except _REJECTED:
                        pass
                return one * float(ufunc(v))
            if ufunc in _BOUNDED:
                def unary32_math_unrounded(x, _):
                    v = float(x)
                    if v == v:
                        try:
                            return twin(v)
                        except _REJECTED:
                            pass
                    return float(ufunc(v))
                unary32_math.unrounded = unary32_math_unrounded
            return unary32_math

        def unary32(x, _):
            return one * float(ufunc(float(x)))
        if ufunc in _BOUNDED:
            def unary32_unrounded(x, _):
                return float(ufunc(float(x)))
            unary32.unrounded = unary32_unrounded
        return unary32
    f32 = np.float32

    def unary32_np1(x, _):
        return f32(float(ufunc(float(x))))
    return unary32_np1


# binary float ops whose kernels compute `from_compute(ufunc(to_compute(a), to_compute(b)))`
# (`elementwise._binary` for a float type: not exact in the type, so through f64)
_BINARY_FLOAT = {"stablehlo.maximum": np.maximum, "stablehlo.minimum": np.minimum,
                 "stablehlo.power": np.power, "stablehlo.atan2": np.arctan2,
                 "stablehlo.remainder": np.fmod}


def _binary_float(ufunc, et):
    """A binary float op as `_binary` computes it on rank-0 arrays: the ufunc on the values
    in f64 (Python floats are those values), rounded once to the type (see `_unary_float`;
    math's function where it is the ufunc's twin, `_math_twin2`)."""
    twin = _math_twin2(ufunc)
    if twin is not None:
        f64 = np.float64
        one = np.float32(1) if _WEAK_PYTHON_FLOATS else None
        f32 = np.float32

        def binary_math(x, y):
            a, b = float(x), float(y)
            if a == a and b == b:
                try:
                    v = twin(a, b)
                    return f64(v) if et == "f64" else (one * v if one is not None else f32(v))
                except _REJECTED:
                    pass
            v = ufunc(a, b)
            return v if et == "f64" else (one * float(v) if one is not None else f32(float(v)))
        return binary_math
    if et == "f64":
        def binary64(x, y):
            return ufunc(float(x), float(y))
        return binary64
    if _WEAK_PYTHON_FLOATS:
        one = np.float32(1)

        def binary32(x, y):
            return one * float(ufunc(float(x), float(y)))
        return binary32
    f32 = np.float32

    def binary32_np1(x, y):
        return f32(float(ufunc(float(x), float(y))))
    return binary32_np1


# ufuncs whose f64 results are NaN or at most 1 in magnitude (`_unrounded`)
_BOUNDED = frozenset((np.sin, np.cos, np.tanh))
# f32 operators that take a Python float operand as that float rounded to f32 (numpy 2),
# the other operand an np.float32
_TAKES_UNROUNDED = frozenset((operator.add, operator.sub, operator.mul, operator.truediv))


def _unrounded(entries, keep):
    """The entries with each f32 sine, cosine or tanh (`_unary_float`: its f64 result rounded
    to f32 as `one * r`) whose every reader is an f32 add, subtract, multiply or divide of it
    and another entry's np.float32 left a Python float: numpy 2 converts a Python float operand
    of an np.float32 operator to f32 (the same one rounding, and the same cast, as `one * r`;
    no overflow, |r| <= 1 or NaN) before the f32 operation, the same values. `keep`: slots
    read after the entries."""
    if not _WEAK_PYTHON_FLOATS:
        return entries
    readers = {}
    for j, e in enumerate(entries):
        for r in _entry_reads(e):
            readers.setdefault(r, []).append(j)
    cand = {e[4] for e in entries if getattr(e[0], "unrounded", None) is not None
            and e[3] == -1 and e[4] not in keep}
    out = list(entries)
    for i, e in enumerate(entries):
        s = e[4]
        if s not in cand or not readers.get(s):
            continue
        ok = True
        for j in readers[s]:
            x = entries[j]
            if x[3] != -1 or x[0] not in _TAKES_UNROUNDED:
                ok = False
                break
            other = x[2] if x[1] == s else x[1]
            if x[1] == x[2] or other in cand:
                ok = False
                break
        if ok:
            out[i] = (e[0].unrounded,) + tuple(e[1:])
    return tuple(out)


_BINARY = {"stablehlo.add": operator.add, "stablehlo.subtract": operator.sub,
           "stablehlo.multiply": operator.mul, "stablehlo.and": operator.and_,
           "stablehlo.or": operator.or_, "stablehlo.xor": operator.xor,
           "stablehlo.maximum": _max_int, "stablehlo.minimum": _min_int}


def scalar_function(op):
    """(fn, number of operands) computing op `op` on numpy scalars (`_SELECT` for a
    select): an admitted (op, element type) pair's own function (`_admitted_function`), else
    for an elementwise op of one or two operands its general kernel on rank-0 arrays
    (`_kernel_function`); None for anything else."""
    form = _admitted_function(op)
    if form is None:
        form = _kernel_function(op)
    return form


# kernels of these modules compute a value from their operands' values alone (no ctx, no
# state): `_kernel_function` may call them on rank-0 arrays
_PURE_KERNEL_MODULES = (".elementwise", ".chlo")


def _kernel_function(op):
    """(fn, n) calling the general kernel of an elementwise op of n = 1 or 2 rank-0
    operands and one rank-0 result of admitted types on rank-0 arrays of numpy scalars: the
    kernel's own bits (about 2 us a call, what the general path pays for the op, while the
    loop's other ops run on scalars); None for other ops."""
    if len(op.results) != 1 or not 1 <= len(op.operands) <= 2 or op.regions:
        return None
    rt = scalar_type(op.results[0].type)
    if rt is None or any(scalar_type(v.type) is None for v in op.operands):
        return None
    kernel = KERNELS.get(op.name)
    # (chlo's ops are math functions of their operands; some of their kernels are made by
    # the registry's factories)
    if kernel is None or not (op.name.startswith("chlo.") or getattr(
            kernel, "__module__", "").endswith(_PURE_KERNEL_MODULES)):
        return None
    asarray = np.asarray
    SEQ = (list, tuple)
    if len(op.operands) == 1:
        def kernel1(a, _):
            v = kernel(None, op, asarray(a))
            return (v[0] if v.__class__ in SEQ else v)[()]
        return kernel1, 1

    def kernel2(a, b):
        v = kernel(None, op, asarray(a), asarray(b))
        return (v[0] if v.__class__ in SEQ else v)[()]
    return kernel2, 2


def _admitted_function(op):
    """`scalar_function` for the admitted (op, element type) pairs."""
    name = op.name
    allowed = ADMITTED.get(name)
    if allowed is None or len(op.results) != 1:
        return None
    rt = scalar_type(op.results[0].type)
    ots = [scalar_type(v.type) for v in op.operands]
    if rt is None or None in ots:
        return None
    if name == "stablehlo.select":
        if len(ots) != 3 or ots[0] != "i1" or ots[1] != rt or ots[2] != rt or rt not in allowed:
            return None
        return _SELECT, 3
    if name == "stablehlo.convert":
        if len(ots) != 1 or ots[0] not in allowed:
            return None
        return _convert_function(op, ots[0], rt), 1
    if name == "stablehlo.compare":
        if len(ots) != 2 or ots[0] != ots[1] or rt != "i1" or ots[0] not in allowed:
            return None
        a = ots[0]
        direction = op.attributes["comparison_direction"].value
        ct = op.attributes.get("compare_type")
        ctype = ct.value if ct is not None else None
        if direction not in _CMP:
            return None
        if a == "i1":
            return (_CMP_I1[direction], 2) if ctype in (None, "UNSIGNED") else None
        if a in _FLOATS:
            return (_CMP[direction], 2) if ctype in (None, "FLOAT") else None
        if ctype is not None and ctype != ("SIGNED" if a in _SIGNED else "UNSIGNED"):
            return None
        return _CMP[direction], 2
    if rt not in allowed or any(t != rt for t in ots):
        return None
    if len(ots) == 1:
        if name == "stablehlo.not":
            return _not, 1
        if name == "stablehlo.negate":
            if rt in _FLOATS:
                # (through f64, as the general kernel: a signalling NaN comes out quiet)
                return _unary_float(_UNARY_KERNELS[name][0][0], rt), 1
            return _neg, 1
        if name in _UNARY_FLOAT:
            ufunc = _UNARY_KERNELS[name][0][0] if name in _UNARY_KERNELS \
                else _OTHER_UNARY[name]
            return _unary_float(ufunc, rt), 1
        return None
    if len(ots) != 2:
        return None
    if rt in _FLOATS and name in _BINARY_FLOAT:
        return _binary_float(_BINARY_FLOAT[name], rt), 2
    if rt in _FLOATS and name == "stablehlo.add":
        return _add_float, 2
    if rt in _FLOATS and name == "stablehlo.multiply":
        return _mul_float, 2
    if name in _BINARY:
        return _BINARY[name], 2
    if name == "stablehlo.divide":
        if rt in _FLOATS:
            return operator.truediv, 2
        return _int_div(SCALAR_TYPES[rt], rt in _SIGNED), 2
    if name == "stablehlo.remainder":
        return _int_rem(SCALAR_TYPES[rt], rt in _SIGNED), 2
    return None


def _convert_function(op, src, dst):
    """A convert between admitted types on a numpy scalar, as the general kernel computes
    it on a rank-0 array: the value itself between equal types (scalars are immutable; the
    kernel's copy has the same bits), numpy's cast where the kernel casts with astype
    (`_exact_cast`, `_wrapping_cast`: integers and booleans into integers, wrapping), the
    kernel itself on the value as a rank-0 array otherwise (floats to integers, anything
    to i1); f32 <-> f64 is numpy's cast as in the kernel, and integers and booleans into
    floats the kernel's specialized form for numpy scalars (through f64, rounded once)."""
    if src == dst:
        return _first
    if src == "i1":
        # (false and true as the kernel converts them: 0 and 1 of the type; a look-up costs
        # a twentieth of numpy's cast of a scalar)
        zero, one = SCALAR_TYPES[dst](0), SCALAR_TYPES[dst](1)

        def convert_bool(a, _):
            return one if a else zero
        return convert_bool
    if src == "f32" and dst == "f64":
        f64 = np.float64

        def convert_widen(a, _):
            return f64(a)            # (exact; a fifth of astype's cost)
        return convert_widen
    s, d = element_type(src), element_type(dst)
    if _exact_cast(s, d) or _wrapping_cast(s, d) or src in _FLOATS and dst in _FLOATS:
        cast = np.dtype(SCALAR_TYPES[dst])

        def convert_cast(a, _):
            return a.astype(cast)
        return convert_cast
    if dst in _FLOATS:
        spec = convert_specialized(op)
        if spec is not None:
            def convert_to_float(a, _):
                return spec(None, op, a)
            return convert_to_float
    kernel = KERNELS["stablehlo.convert"]
    asarray = np.asarray

    def convert_kernel(a, _):
        return kernel(None, op, asarray(a))[()]
    return convert_kernel


# ------------------------------------------------------------------ compiling a loop
# (function, element type kind) -> (the operand value that makes it return the other
# operand unchanged, whether on either side): i1 x ^ false, x != false, x | false, x & true,
# x == true; integer x + 0, x - 0, x * 1, x | 0, x ^ 0 (the same value of the same type; not
# floats: -0 + 0 is +0)
_IDENTITIES = {
    (operator.xor, "i1"): (False, True), (operator.or_, "i1"): (False, True),
    (operator.and_, "i1"): (True, True), (_eq_i1, "i1"): (True, True),
    (operator.add, "int"): (0, True), (operator.sub, "int"): (0, False),
    (operator.mul, "int"): (1, True), (operator.or_, "int"): (0, True),
    (operator.xor, "int"): (0, True),
}


def _identity(fn, et, ins, known):
    """The operand slot a binary entry `fn` of result type `et` returns unchanged, given the
    known values, or None."""
    hit = _IDENTITIES.get((fn, "i1" if et == "i1" else "int" if et in _INTS else None))
    if hit is None:
        return None
    value, both = hit
    a, b = ins
    if b in known and known[b] == value:
        return a
    if both and a in known and known[a] == value:
        return b
    return None


def _fuse_floor_mod(entries, ops, known):
    """The entries with JAX's floor_mod pattern (`jax_idioms`: a truncated remainder by a
    known d > 0 of a signed type, corrected to the sign of d) made numpy's floored `%` of
    the scalars (|r| < d: no overflow), the same values."""
    form = []
    for e, op in zip(entries, ops):
        fn, a, b, c, out = e
        if c == -2:
            form.append((fn, -1, -1, -2, out, "frame", op))   # (an array's read or store)
        elif c >= 0:
            form.append((fn, a, b, c, out, "select", op))
        elif op.name == "stablehlo.remainder":
            form.append((fn, a, b, -2, out, "kernel", op))
        else:
            form.append((fn, a, b, -1, out))
    g = _Graph(form, known)
    out = list(entries)
    for s, e in enumerate(form):
        if len(e) == 7 and e[5] == "select":
            got = _match_mod(g, s)
            if got is not None:
                members, (xs, d, t) = got
                rem = entries[members[0]]
                if t is not SCALAR_TYPES.get(scalar_type(ops[s].results[0].type)) \
                        or rem[1] != xs or known.get(rem[2]) != d:
                    continue
                out[s] = [operator.mod, xs, rem[2], -1, e[4]]
    return out


def _live(entries, ops, keep):
    """The entries whose values something reads (`keep`: the slots read after them)."""
    live = set(keep)
    es, os_ = [], []
    for e, op in zip(reversed(entries), reversed(ops)):
        if e[4] not in live:
            continue
        live.update(_entry_reads(e))
        es.append(e)
        os_.append(op)
    es.reverse()
    os_.reverse()
    return es, os_


class _NotScalar(Exception):
    """The loop is not one this module runs."""


def _as_scalar(value, et):
    """A value a general kernel computed, as the numpy scalar of element type `et`."""
    if isinstance(value, (list, tuple)):
        if len(value) != 1:
            raise _NotScalar
        value = value[0]
    tp = SCALAR_TYPES[et]
    if value.__class__ is tp:
        return value
    if value.__class__ is np.ndarray and value.shape == () and value.dtype == np.dtype(tp):
        return value[()]
    raise _NotScalar


class _Compiler:
    def __init__(self, ctx, nargs, buffers=None):
        self.ctx = ctx
        self.slots = {}              # Value -> slot
        self.known = {}              # slot -> numpy scalar known when compiling
        self.entries = []            # [fn, a, b, c, out] (c == _SELECT: f[out] = a ? b : c)
        self.ops = []                # the op of each entry
        self.nslots = nargs
        self.nops = 0
        # the carried arrays (`buffer_type`): slot -> (element type, shape); the version
        # each value in such a slot holds (Value -> int), and the slot's current version:
        # a write stores into the slot in place, after which the values of older versions
        # may not be read
        self.buffers = buffers if buffers is not None else {}
        self.version = {}
        self.current = {s: 0 for s in self.buffers}
        self.speculative = 0         # inside the branches of a case computed both ways

    def new_slot(self):
        s = self.nslots
        self.nslots += 1
        return s

    def slot(self, v):
        s = self.slots.get(v)
        if s is None:
            raise _NotScalar         # a value from outside the loop's regions
        return s

    def scalar(self, v):
        """The slot of scalar value `v` (not a carried array)."""
        s = self.slot(v)
        if s in self.buffers:
            raise _NotScalar
        return s

    def buffer(self, v):
        """The slot of carried array `v`, which must be the array's current version."""
        s = self.slot(v)
        if s not in self.buffers or self.version.get(v) != self.current[s]:
            raise _NotScalar
        return s

    def constant(self, value, et):
        s = self.new_slot()
        self.known[s] = _as_scalar(value, et)
        return s

    def block(self, block, arg_slots, depth, arg_versions=None):
        """Compile `block` with its arguments in `arg_slots` (of carried arrays: at
        `arg_versions`, else their first); the slots of its terminator's operands."""
        if len(block.arguments) != len(arg_slots):
            raise _NotScalar
        for i, (a, s) in enumerate(zip(block.arguments, arg_slots)):
            if s in self.buffers:
                if buffer_type(a.type) != self.buffers[s]:
                    raise _NotScalar
                self.version[a] = arg_versions[i] if arg_versions is not None else 0
            elif one_type(a.type) is None:
                raise _NotScalar
            self.slots[a] = s
        ops = block.operations
        if not ops:
            raise _NotScalar
        for op in ops[:-1]:
            self.nops += 1
            if self.nops > _MAX_OPS:
                raise _NotScalar
            self.op(op, depth)
        term = ops[-1]
        if term.name not in ("stablehlo.return", "func.return") or term.regions:
            raise _NotScalar
        return [self.slot(v) for v in term.operands]

    def op(self, op, depth):
        name = op.name
        if name == _CASE:
            self.case(op, depth)
            return
        if op.regions or op.successors:
            raise _NotScalar
        if name == _CALL:
            self.call(op, depth)
            return
        if len(op.results) != 1:
            raise _NotScalar
        res = op.results[0]
        if name in _ONE_ELEMENT_MOVES and len(op.operands) == 1:
            # a value of one element given another shape of one element: the same scalar
            s = self.scalar(op.operands[0])
            et = one_type(res.type)
            if et is None or et != one_type(op.operands[0].type):
                raise _NotScalar
            self.slots[res] = s
            return
        if name == _DYNAMIC_SLICE:
            self.read(op)
            return
        if name == _DYNAMIC_UPDATE_SLICE:
            self.write(op)
            return
        et = scalar_type(res.type)
        if et is None:
            raise _NotScalar
        ctx = self.ctx
        if name == _CONSTANT:
            if op.operands:
                raise _NotScalar
            self.slots[res] = self.constant(KERNELS[name](ctx, op), et)
            return
        form = _admitted_function(op)
        if form is None:
            if self.speculative:
                raise _NotScalar     # (a general kernel might raise in a branch not taken)
            form = _kernel_function(op)
        if form is None:
            raise _NotScalar
        fn, n = form
        ins = [self.scalar(v) for v in op.operands]
        known = self.known
        if all(s in known for s in ins):
            # computed once, by the general kernel, on rank-0 arrays
            try:
                value = KERNELS[name](ctx, op, *[np.asarray(known[s]) for s in ins])
            except StableHLOError:
                raise _NotScalar from None
            self.slots[res] = self.constant(value, et)
            return
        if fn is _SELECT and ins[0] in known:
            self.slots[res] = ins[1] if known[ins[0]] else ins[2]
            return
        if n == 2:
            same = _identity(fn, et, ins, known)
            if same is not None:
                self.slots[res] = same
                return
        out = self.new_slot()
        self.slots[res] = out
        if fn is _SELECT:
            self.entries.append([fn, ins[0], ins[1], ins[2], out])
        elif fn in _SWAPPED:
            self.entries.append([_SWAPPED[fn], ins[1], ins[0], -1, out])
        else:
            self.entries.append([fn, ins[0], ins[1] if n == 2 else ins[0], -1, out])
        self.ops.append(op)

    def _starts(self, values, shape):
        """The slots of the start indices `values` of one element of an array of `shape`:
        rank-0 integers, one per dim."""
        if len(values) != len(shape):
            raise _NotScalar
        for v in values:
            if scalar_type(v.type) not in _INTS:
                raise _NotScalar
        return [self.scalar(v) for v in values]

    def read(self, op):
        """A `dynamic_slice` of one element of a carried array (JAX's `xs[i]` in a scan):
        the element at the start indices clamped into the array, as a numpy scalar."""
        x = op.operands[0]
        b = self.buffer(x)
        et, shape = self.buffers[b]
        res = op.results[0]
        if one_type(res.type) != et or len(res.type.shape) != len(shape) \
                or _slice_sizes(op) != (1,) * len(shape):
            raise _NotScalar
        starts = self._starts(op.operands[1:], shape)
        out = self.new_slot()
        self.slots[res] = out
        if len(shape) == 1:
            self.entries.append([_read1(shape[0] - 1), b, starts[0], -1, out])
        else:
            self.entries.append([_read_n(b, starts, shape), (b, *starts), 0, -2, out])
        self.ops.append(op)

    def write(self, op):
        """A `dynamic_update_slice` of one element into a carried array (JAX's
        `ys.at[i].set(y)` in a scan): the element stored in place at the start indices
        clamped into the array; the array's older versions are not read after it (checked
        as later ops read them: `buffer`)."""
        if self.speculative:
            raise _NotScalar
        x, u = op.operands[0], op.operands[1]
        b = self.buffer(x)
        et, shape = self.buffers[b]
        res = op.results[0]
        if buffer_type(res.type) != (et, shape) or one_type(u.type) != et \
                or len(u.type.shape) != len(shape):
            raise _NotScalar
        us = self.scalar(u)
        starts = self._starts(op.operands[2:], shape)
        v = self.current[b] = self.current[b] + 1
        self.slots[res] = b
        self.version[res] = v
        self.entries.append([_write(b, us, starts, shape), (b, us, *starts), 0, -2, b])
        self.ops.append(op)

    def case(self, op, depth):
        """A `case` of rank-0 results: with a known index, the branch it picks (1, and any
        index out of range, the last); otherwise every branch computed (their ops pure and
        unable to fail: admitted ones, no array stores; see `op`) and one select per result
        on the index (index 0 the first branch, ..., the last for any other index)."""
        regions = op.regions
        if not regions or len(op.operands) != 1 or op.successors:
            raise _NotScalar
        it = scalar_type(op.operands[0].type)
        if it not in _INTS or any(scalar_type(r.type) is None for r in op.results):
            raise _NotScalar
        for region in regions:
            blocks = region.blocks
            if len(blocks) != 1 or blocks[0].arguments:
                raise _NotScalar
        idx = self.scalar(op.operands[0])
        nb = len(regions)
        if idx in self.known:
            k = int(self.known[idx])
            picks = self.block(regions[k if 0 <= k < nb else nb - 1].blocks[0], [], depth)
            if len(picks) != len(op.results):
                raise _NotScalar
            for r, s in zip(op.results, picks):
                self.slots[r] = s
            return
        picks = []
        self.speculative += 1
        try:
            for region in regions:
                outs = self.block(region.blocks[0], [], depth)
                if len(outs) != len(op.results) or any(s in self.buffers for s in outs):
                    raise _NotScalar
                picks.append(outs)
        finally:
            self.speculative -= 1
        # (the last branch unless the index is one of the others')
        chosen = list(picks[-1])
        stype = SCALAR_TYPES[it]
        for j in range(nb - 2, -1, -1):
            if all(a == b for a, b in zip(picks[j], chosen)):
                continue
            p = self.new_slot()
            if j == 0 and nb == 2:
                zero = self.constant(stype(0), it)
                self.entries.append([operator.ne, idx, zero, -1, p])
                first, other = picks[0], chosen
                picks_j = (other, first)       # (index != 0: the last)
            else:
                jj = self.constant(stype(j), it)
                self.entries.append([operator.eq, idx, jj, -1, p])
                picks_j = (picks[j], chosen)
            self.ops.append(op)
            merged = []
            for t, e in zip(*picks_j):
                if t == e:
                    merged.append(t)
                    continue
                out = self.new_slot()
                self.entries.append([_SELECT, p, t, e, out])
                self.ops.append(op)
                merged.append(out)
            chosen = merged
        for r, s in zip(op.results, chosen):
            self.slots[r] = s

    def call(self, op, depth):
        if depth >= _MAX_DEPTH:
            raise _NotScalar
        callee = op.attributes.get("callee")
        functions = getattr(self.ctx, "functions", None)
        if functions is None:
            raise _NotScalar
        func = functions.get(getattr(callee, "root", None))
        if func is None or not func.regions or len(func.regions[0].blocks) != 1:
            raise _NotScalar
        ins = [self.slot(v) for v in op.operands]
        versions = [self.version.get(v) for v in op.operands]
        for v, s, ver in zip(op.operands, ins, versions):
            if s in self.buffers and ver != self.current[s]:
                raise _NotScalar     # (an older version of a carried array)
        block = func.regions[0].blocks[0]
        outs = self.block(block, ins, depth + 1, versions)
        if len(outs) != len(op.results):
            raise _NotScalar
        for r, s, v in zip(op.results, outs, block.operations[-1].operands):
            if s in self.buffers:
                if buffer_type(r.type) != self.buffers[s]:
                    raise _NotScalar
                self.version[r] = self.version.get(v)
            elif one_type(r.type) is None:
                raise _NotScalar
            self.slots[r] = s


_ONE_ELEMENT_MOVES = ("stablehlo.reshape", "stablehlo.broadcast_in_dim")
_DYNAMIC_SLICE = "stablehlo.dynamic_slice"
_DYNAMIC_UPDATE_SLICE = "stablehlo.dynamic_update_slice"


def _slice_sizes(op):
    from .movement import _ints
    try:
        return _ints(op, "slice_sizes")
    except (KeyError, TypeError, ValueError, AttributeError, StableHLOError):
        return None


def _read1(last):
    """The entry function reading element i of a rank-1 array (i clamped to [0, last])."""
    def read1(buf, i):
        return buf[i if 0 <= i <= last else 0 if i < 0 else last]
    return read1


def _clamp(i, last):
    return i if 0 <= i <= last else 0 if i < 0 else last


def _read_n(b, starts, shape):
    """The entry function (of the frame) reading one element of the array in slot `b` at
    the start indices in slots `starts`, each clamped into its dim."""
    lasts = tuple(d - 1 for d in shape)
    pairs = tuple(zip(starts, lasts))

    def read_n(f, _=None):
        return f[b][tuple([_clamp(f[s], m) for s, m in pairs])]

    def plain(buf, *idx):
        return buf[tuple([_clamp(i, m) for i, m in zip(idx, lasts)])]
    read_n.call = (plain, (b, *starts))       # (scalar_codegen's form of the entry)
    return read_n


def _write(b, u, starts, shape):
    """The entry function (of the frame) storing the scalar in slot `u` into the array in
    slot `b` at the start indices in slots `starts` (clamped), returning the array."""
    lasts = tuple(d - 1 for d in shape)
    if len(shape) == 1:
        s0, m0 = starts[0], lasts[0]

        def write1(f, _=None):
            buf = f[b]
            i = f[s0]
            buf[i if 0 <= i <= m0 else 0 if i < 0 else m0] = f[u]
            return buf

        def plain1(buf, x, i):
            buf[i if 0 <= i <= m0 else 0 if i < 0 else m0] = x
            return buf
        write1.call = (plain1, (b, u, s0))
        return write1
    pairs = tuple(zip(starts, lasts))

    def write_n(f, _=None):
        buf = f[b]
        buf[tuple([_clamp(f[s], m) for s, m in pairs])] = f[u]
        return buf

    def plain(buf, x, *idx):
        buf[tuple([_clamp(i, m) for i, m in zip(idx, lasts)])] = x
        return buf
    write_n.call = (plain, (b, u, *starts))
    return write_n


def _schedule(entries, ops, results, n):
    """The body's entries with the result of carried value k stored straight into slot k
    where every read of the old value of k comes before it (its entry moved later where that
    helps and its own readers allow), and the moves left (slot k <- result slot) for the
    rest."""
    entries = [list(e) for e in entries]
    ops = list(ops)
    results = list(results)

    reads = _entry_reads

    def valid(es, into):
        """Whether, with the results in `into` (result slot -> carried slot) stored into
        their carried slots, no entry reads a carried slot after its new value is stored."""
        stored = set()
        for e in es:
            for s in reads(e):
                if s in stored:
                    return False
            k = into.get(e[4])
            if k is not None:
                stored.add(k)
        return True

    into = {}
    # (slots read by entries of the frame, whose functions hold their slot numbers: a
    # carried array's read or store; those are not renamed)
    fixed = {x for e in entries if e[3] == -2 for x in e[1]}
    for k in range(n):
        r = results[k]
        # (not where another carried value takes the old value of k, or the same result)
        if r < n or results.count(r) != 1 or k in results or r in fixed or k in fixed:
            continue
        i = next((j for j, e in enumerate(entries) if e[4] == r), None)
        if i is None:
            continue
        order = entries[:]
        oi = ops[:]
        e = order.pop(i)
        o = oi.pop(i)
        # placed after the last reader of slot k, before its own first reader
        last = max((j for j, x in enumerate(order) if k in reads(x)), default=-1)
        first = min((j for j, x in enumerate(order) if r in reads(x)), default=len(order))
        pos = max(i, last + 1)
        if pos > first:
            continue
        # (not past an entry storing into a slot it reads: a carried array's store)
        if any(x[4] in reads(e) for x in order[i:pos]):
            continue
        order.insert(pos, e)
        oi.insert(pos, o)
        trial = dict(into)
        trial[r] = k
        if valid(order, trial):
            entries, ops, into = order, oi, trial
    for r, k in into.items():
        results[k] = k
    entries = [[e[0]] + [into.get(y, y) for y in e[1:]] for e in entries]
    moves = tuple((k, results[k]) for k in range(n) if results[k] != k)
    return entries, ops, moves


def _lazy_select(pred, x, y):
    """The entry function `fn(f)` of a select whose predicate (`pred`: (compare fn, a, b),
    or (None, slot)) and operands (`x`, `y`: (fn, a, b) of an entry whose value only the
    select reads, or (_first, slot, slot)) are computed in it: only the operand it picks
    is computed (the ops are pure and cannot fail here)."""
    xf, xa, xb = x
    yf, ya, yb = y
    cf, pa, pb = pred
    # (`fn(f)`, or `fn(f, f)` as the unrolled runner calls every entry; `parts` for
    # scalar_codegen)
    if cf is None:
        def select_lazy(f, _=None):
            return xf(f[xa], f[xb]) if f[pa] else yf(f[ya], f[yb])
        select_lazy.parts = (pred, x, y)
        return select_lazy

    def select_compare_lazy(f, _=None):
        return xf(f[xa], f[xb]) if cf(f[pa], f[pb]) else yf(f[ya], f[yb])
    select_compare_lazy.parts = (pred, x, y)
    return select_compare_lazy


def _entry_reads(e):
    if e[3] == -2:
        return e[1]
    return (e[1], e[2]) if e[3] < 0 else (e[1], e[2], e[3])


def _fuse_selects(entries, ops, keep):
    """The entries with each select's predicate compare and operand entries that nothing
    else reads (`keep`: slots read after the entries) computed in the select itself (see
    `_lazy_select`), where no entry between theirs and the select's stores into a slot they
    read. A fused select is the entry (fn, reads, 0, -2, out): `f[out] = fn(f)`."""
    entries = [list(e) for e in entries]
    ops = list(ops)
    for s in range(len(entries)):
        e = entries[s]
        if e[3] < 0:
            continue
        readers = {}
        for j, x in enumerate(entries):
            if x is None:
                continue
            for r in _entry_reads(x):
                readers[r] = readers.get(r, 0) + 1
        producer = {x[4]: j for j, x in enumerate(entries) if x is not None}

        def fusable(slot):
            """The position of the binary entry making `slot`, read by this select alone
            and movable to it, or None."""
            j = producer.get(slot)
            if j is None or j > s or readers.get(slot) != 1 or slot in keep:
                return None
            x = entries[j]
            if x[3] != -1:
                return None
            between = {y[4] for y in entries[j + 1:s] if y is not None}
            if x[1] in between or x[2] in between:
                return None
            return j
        p, xs, ys = e[1], e[2], e[3]
        jp, jx, jy = fusable(p), fusable(xs), fusable(ys)
        if jx is None and jy is None:
            continue
        parts, used, reads = [], [], []
        for slot, j in ((xs, jx), (ys, jy)):
            if j is None:
                parts.append((_first, slot, slot))
                reads.append(slot)
            else:
                x = entries[j]
                parts.append((x[0], x[1], x[2]))
                reads += [x[1], x[2]]
                used.append(j)
        if jp is not None and ops[jp].name == "stablehlo.compare":
            x = entries[jp]
            pred = (x[0], x[1], x[2])
            reads += [x[1], x[2]]
            used.append(jp)
        else:
            pred = (None, p, p)
            reads.append(p)
        entries[s] = [_lazy_select(pred, parts[0], parts[1]), tuple(reads), 0, -2, e[4]]
        for j in used:
            entries[j] = None
    kept = [(e, o) for e, o in zip(entries, ops) if e is not None]
    return [e for e, _ in kept], [o for _, o in kept]


def compile_loop(ctx, op):
    """The runner `run(ctx, op, args) -> list or None` of `while` op `op` on numpy scalars,
    or None where the loop is not one this module runs."""
    if len(op.regions) != 2:
        return None
    cregion, bregion = op.regions
    if len(cregion.blocks) != 1 or len(bregion.blocks) != 1:
        return None
    n = len(op.operands)
    types = [scalar_type(v.type) for v in op.operands]
    # carried arrays read and written one element at a time (`_Compiler.read`, `write`)
    buffers = {}
    for k, v in enumerate(op.operands):
        if types[k] is None:
            bt = buffer_type(v.type)
            if bt is None:
                return None
            buffers[k] = bt
    if n == 0 or len(buffers) == n or len(op.results) != n \
            or [scalar_type(r.type) for r in op.results] != types \
            or any(buffer_type(op.results[k].type) != bt for k, bt in buffers.items()):
        return None
    try:
        cc = _Compiler(ctx, n, buffers)
        couts = cc.block(cregion.blocks[0], list(range(n)), 0)
        if len(couts) != 1 or cc.current != dict.fromkeys(buffers, 0):
            return None
        bc = _Compiler(ctx, cc.nslots, buffers)
        bc.known = cc.known
        bouts = bc.block(bregion.blocks[0], list(range(n)), 0)
        # each carried array comes back in its own slot at its current version (written
        # in place, or not at all)
        term = bregion.blocks[0].operations[-1]
        for k in buffers:
            if bouts[k] != k or bc.version.get(term.operands[k]) != bc.current[k]:
                return None
        if any(s in buffers for k, s in enumerate(bouts) if k not in buffers) \
                or couts[0] in buffers:
            return None
    except _NotScalar:
        return None
    if len(bouts) != n or scalar_type(cregion.blocks[0].operations[-1].operands[0].type) != "i1":
        return None
    # (the condition's values and the body's share one frame: the body's slots follow)
    ce, cops = _live(_fuse_floor_mod(cc.entries, cc.ops, cc.known), cc.ops, couts)
    be, bops = _live(_fuse_floor_mod(bc.entries, bc.ops, bc.known), bc.ops, bouts)
    bentries, bops, moves = _schedule(be, bops, bouts, n)
    ce, cops = _fuse_selects(ce, cops, {couts[0]})
    centries = tuple(tuple(e) for e in ce)
    keep = {src for _, src in moves} | set(range(n))
    # a counted loop's values of its counters alone (`_induction_slice`), computed before it
    sliced = None
    cone = _cone(centries, couts[0])
    if cone is not None and _counter(cone, bc.known, bentries, moves, n) is not None:
        got = _induction_slice(bentries, bops, moves, n, bc.known, types)
        if got is not None:
            se, sops, spec = got
            se, sops = _fuse_selects(se, sops, keep)
            sliced = (_unrounded(tuple(tuple(e) for e in se), keep), spec)
    bentries, bops = _fuse_selects(bentries, bops, keep)
    if all(e[3] == -1 and e[0].__class__ is _BUILTIN for e in bentries) and len(centries) <= 1 \
            and sliced is None:
        # a body of Python operators only: the compiled block's merged sequence runs it
        # (measured no faster here, and a chain of 50 f32 ops about 2x slower, not understood)
        return None
    return _runner(n, [SCALAR_TYPES.get(t) for t in types], bc.nslots, bc.known, centries,
                   cops, couts[0], _unrounded(tuple(tuple(e) for e in bentries), keep), bops,
                   moves,
                   frozenset(k for k in range(n) if bouts[k] == k and bc.current.get(k, 0) == 0),
                   sliced, buffers)


def _cone(centries, cslot):
    """The condition's one binary entry (fn, a, b) computing its result, or None."""
    if len(centries) == 1 and centries[0][3] == -1 and centries[0][4] == cslot:
        return centries[0][:3]
    return None


# ------------------------------------------------------------------ counters, precomputed
# The operators an entry of `_induction_slice` may have: on numpy integer and boolean arrays
# each computes elementwise what it computes on numpy scalars of the same dtype (the same
# ufunc loops: wrapping add, subtract and multiply, floored `%` (x % 0 = 0), compares, bitwise
# ops; the i1 compares are bitwise ops too)
_SLICE_FNS = frozenset((operator.add, operator.sub, operator.mul, operator.and_, operator.or_,
                        operator.xor, operator.mod, *_CMP.values(), *_CMP_I1.values()))
_MAX_PRECOMPUTED = 1 << 18     # iterations whose counter values are computed in arrays at most


def _induction_slice(entries, ops, moves, n, known, types):
    """For a counted loop: (the body's other entries, their ops, spec) where some carried
    integer slots k are counters (their one store the body's `k = k + c`, c a known integer of
    k's type, no move into k) whose values nothing but the slice reads, and the slice (integer
    and boolean entries of `_SLICE_FNS` reading counters, known values, carried values the
    body never stores, and the slice's own values) is computed for all iterations at once
    before the loop (`_precompute`); None where there is no counter. spec: (counters: (slot,
    c, position of its store), steps: (fn, operand refs, out), frontier: the slice's slots
    the rest reads)."""
    int_ok = frozenset(_INT_SCALARS) | {np.bool_}
    stype = {k: SCALAR_TYPES.get(types[k]) for k in range(n)}
    for s, v in known.items():
        stype[s] = v.__class__
    for e, op in zip(entries, ops):
        stype[e[4]] = SCALAR_TYPES.get(scalar_type(op.results[0].type))
    stores = {}
    for e in entries:
        stores[e[4]] = stores.get(e[4], 0) + 1
    moved_into = {d for d, _ in moves}
    move_srcs = {s for _, s in moves}
    invariant = {k for k in range(n) if k not in stores and k not in moved_into}
    counters = {}
    for i, e in enumerate(entries):
        k = e[4]
        if k >= n or e[0] is not operator.add or e[3] != -1 or stores[k] != 1 \
                or k in moved_into or stype[k] not in _COUNTER_TYPES:
            continue
        c = e[2] if e[1] == k else e[1] if e[2] == k else None
        if c is None or c == k or c not in known or known[c].__class__ is not stype[k]:
            continue
        counters[k] = (i, int(known[c]))
    while counters:
        updates = {i for i, _ in counters.values()}
        avail = set(known) | invariant | set(counters)
        sl = set(updates)
        for i, e in enumerate(entries):
            if i in sl or e[3] != -1 or e[0] not in _SLICE_FNS or e[4] < n:
                continue
            if stype.get(e[4]) in int_ok and stype.get(e[1]) in int_ok \
                    and stype.get(e[2]) in int_ok and e[1] in avail and e[2] in avail:
                sl.add(i)
                avail.add(e[4])
        outside = set(move_srcs)
        for i, e in enumerate(entries):
            if i not in sl:
                outside.update(_entry_reads(e))
        bad = [k for k in counters if k in outside]
        if not bad:
            break
        for k in bad:
            del counters[k]
    if not counters:
        return None
    steps = []
    for i, e in enumerate(entries):
        if i not in sl or i in updates:
            continue
        refs = []
        for r in (e[1], e[2]):
            if r in counters:
                # (read after the counter's store: its next value)
                refs.append((1, r, 1 if counters[r][0] < i else 0))
            elif r in known or r in invariant:
                refs.append((0, r, 0))
            else:
                refs.append((2, r, 0))
        steps.append((e[0], refs[0], refs[1], e[4]))
    # (a value of the slice is one per iteration where it reads a counter, else the same in
    # every iteration)
    varying = set()
    for fn, ra, rb, out in steps:
        if any(kind == 1 or kind == 2 and r in varying for kind, r, _ in (ra, rb)):
            varying.add(out)
    needed = {st[3] for st in steps} & outside
    frontier = tuple(sorted(needed & varying))
    fixed = tuple(sorted(needed - varying))
    rest = [(e, op) for i, (e, op) in enumerate(zip(entries, ops)) if i not in sl]
    spec = (tuple((k, c, i) for k, (i, c) in sorted(counters.items())), tuple(steps), frontier,
            fixed)
    return [e for e, _ in rest], [op for _, op in rest], spec


_COUNTER_TYPES = (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32)


def _precompute(spec, f, todo):
    """The slice of `_induction_slice` for `todo` iterations from frame `f`: the arrays of
    the frontier's values (one per iteration), with the counters' final values and the
    slice's values that are the same every iteration stored into f; None (f untouched) where
    a counter would leave its type's range (no wrapping), or there are too many iterations.
    Each array element is the numpy scalar the entries compute in that iteration: the same
    operators on arrays of the same dtypes, elementwise."""
    if todo > _MAX_PRECOMPUTED:
        return None
    counters, steps, frontier, fixed = spec
    seqs = {}
    for k, c, _ in counters:
        v = f[k]
        info = np.iinfo(v.dtype)
        k0 = int(v)
        last = k0 + c * todo
        if not info.min <= last <= info.max:
            return None
        # (every value between k0 and last: in the type, and in int64)
        seqs[k] = (np.arange(todo + 1, dtype=np.int64) * c + k0).astype(v.dtype)
    vals = {}
    for fn, ra, rb, out in steps:
        xs = []
        for kind, r, after in (ra, rb):
            if kind == 0:
                xs.append(f[r])
            elif kind == 1:
                seq = seqs[r]
                xs.append(seq[1:] if after else seq[:todo])
            else:
                xs.append(vals[r])
        vals[out] = fn(xs[0], xs[1])
    for k, _, _ in counters:
        f[k] = seqs[k][todo]
    for s in fixed:
        f[s] = vals[s]
    return [vals[s] for s in frontier]


def _select_entry(p, x, y):
    """A plain select as an entry function of the frame (`fn(f, f)`, see `_fast_loop`)."""
    def select(f, _):
        return f[x] if f[p] else f[y]
    return select


_UNROLLED = 8              # body entries `_fast_loop` runs without a loop of its own


def _fast_loop(cone, counter, body, moves, fslot, pre=None, entries=None):
    """The loop of `_runner` for a condition of one binary entry (`cone`: fn, a, b) and no
    deadline: `loop(ctx, op, f, left) -> iterations run`, with the body's entries (each
    (fn, a, b, out): `f[out] = fn(f[a], f[b])`; a select reads the frame itself, stored in
    slot `fslot`) run one after the other in the loop's own code (no loop over them, no
    unpacking of their tuples: the first `_UNROLLED`; any further ones in a loop). Where the
    loop counts (`counter`: the carried slot k of a condition `k < C`, C known, whose only
    store is the body's `k = k + 1`), it runs the C - k iterations with no condition
    computed: k takes each value below C once (no wrapping: k + 1 <= C), the condition
    holds until k reaches C. A counted loop of more than `left` iterations is not run here
    (None: the caller runs the loop as before, which stops at the limit); otherwise the loop
    counts its iterations against `left` as `_runner`'s does. With `pre` (the spec of
    `_induction_slice`, and `body` the entries outside its slice) a counted loop first
    computes the slice (`_precompute`; None where it does not) and stores its values each
    iteration takes before the entries run. With `entries` (the body's entries as
    `_runner` has them: (fn, a, b, c, out)), once the loop has run
    `scalar_codegen.GENERATE_AFTER` iterations it runs as straight-line Python generated
    from them (`scalar_codegen.generated_loop`: the same operators on the same values)."""
    cf, ca, cb = cone
    pad = (_first, fslot, fslot, fslot)
    head = tuple(body[:_UNROLLED]) + (pad,) * (_UNROLLED - min(len(body), _UNROLLED))
    rest = tuple(body[_UNROLLED:])
    k = len(body)
    g1, g2, g3, g4, g5, g6, g7 = (k > 1, k > 2, k > 3, k > 4, k > 5, k > 6, k > 7)
    (f0, a0, b0, o0), (f1, a1, b1, o1), (f2, a2, b2, o2), (f3, a3, b3, o3), \
        (f4, a4, b4, o4), (f5, a5, b5, o5), (f6, a6, b6, o6), (f7, a7, b7, o7) = head
    dsts = {d for d, _ in moves}
    direct = not any(s in dsts for _, s in moves)
    srcs = tuple(s for _, s in moves)
    dst = tuple(d for d, _ in moves)
    get_moved = operator.itemgetter(*srcs) if len(srcs) > 1 else None
    forever = itertools.repeat(None)
    pslots = pre[2] if pre is not None and counter is not None else ()
    fed = len(pslots) > 0
    single = len(pslots) == 1
    p0 = pslots[0] if fed else None
    limit = int(np.iinfo(np.int64).max)
    # the generated runner: [function, or None before it is made, or False where it cannot
    # be; iterations run so far]
    gen = [None if entries is not None else False, 0]

    def generate():
        try:
            got = scalar_codegen.generated_loop(cone, counter is not None, entries, moves,
                                                pslots, _SWAPPED, _PREFIX)
        except (SyntaxError, ValueError, TypeError, RecursionError, MemoryError):
            got = None   # (a source the compiler refuses: the list runner, as before)
        gen[0] = got if got is not None else False

    def loop(ctx, op, f, left):
        if counter is not None:
            todo = int(f[cb]) - int(f[ca])
            if todo < 0:
                todo = 0
            if todo > left:
                return None
            steps = range(todo)
            check = False
            if pre is not None:
                arrays = _precompute(pre, f, todo)
                if arrays is None:
                    return None
                if single:
                    steps = arrays[0]
                elif fed:
                    steps = zip(*arrays)
        else:
            todo = limit
            steps = forever
            check = True
        g = gen[0]
        if g is None and scalar_codegen.ENABLED:
            if gen[1] + (0 if check else todo) >= scalar_codegen.GENERATE_AFTER:
                generate()
                g = gen[0]
        if g and scalar_codegen.ENABLED:
            ran = g(f, steps, left, ctx, op)
            return ran if check else todo
        ran = 0
        f[fslot] = f
        for v in steps:
            if fed:
                if single:
                    f[p0] = v
                else:
                    i = 0
                    for x in v:
                        f[pslots[i]] = x
                        i += 1
            if check:
                if not cf(f[ca], f[cb]):
                    break
                ran += 1
                if ran > left:
                    ctx.steps += ran
                    left -= ran
                    ran = 0
                    ctx.tick(op, counted=True)
            # (nested: a body of k entries tests min(k, 7) guards)
            f[o0] = f0(f[a0], f[b0])
            if g1:
                f[o1] = f1(f[a1], f[b1])
                if g2:
                    f[o2] = f2(f[a2], f[b2])
                    if g3:
                        f[o3] = f3(f[a3], f[b3])
                        if g4:
                            f[o4] = f4(f[a4], f[b4])
                            if g5:
                                f[o5] = f5(f[a5], f[b5])
                                if g6:
                                    f[o6] = f6(f[a6], f[b6])
                                    if g7:
                                        f[o7] = f7(f[a7], f[b7])
                                        for fn, a, b, out in rest:
                                            f[out] = fn(f[a], f[b])
            if dst:
                if direct:
                    for d, s in moves:
                        f[d] = f[s]
                elif get_moved is not None:
                    i = 0
                    for v in get_moved(f):
                        f[dst[i]] = v
                        i += 1
                else:
                    f[dst[0]] = f[srcs[0]]
        f[fslot] = None
        gen[1] += ran if check else todo
        return ran if check else todo
    return loop


def _counter(cone, known, bentries, moves, n):
    """The carried slot k of a condition `k < C` (C a known integer) whose only store is
    the body's entry `k = k + 1` (in place: see `_schedule`), or None."""
    fn, k, c = cone
    if fn is not operator.lt or not 0 <= k < n or c not in known \
            or known[c].__class__ not in _INT_SCALARS or any(d == k for d, _ in moves):
        return None
    stores = [e for e in bentries if e[4] == k]
    if len(stores) != 1:
        return None
    e = stores[0]
    if e[0] is not operator.add or e[3] != -1:
        return None
    one = e[2] if e[1] == k else e[1] if e[2] == k else None
    if one is None or one not in known or known[one].__class__ is not known[c].__class__ \
            or known[one] != 1:
        return None
    return k


_INT_SCALARS = tuple(SCALAR_TYPES[t] for t in _INTS)


def _runner(n, scalars, nslots, known, centries, cops, cslot, bentries, bops, moves, same,
            sliced=None, buffers=None):
    template = [None] * (nslots + 2)
    # the carried arrays: k -> (dtype, shape, whether the loop stores into it: then it runs
    # on a copy of its own)
    arrays = {k: (np.dtype(SCALAR_TYPES[et]), shape, k not in same)
              for k, (et, shape) in (buffers or {}).items()}
    for s, v in known.items():
        template[s] = v
    dtypes = tuple(np.dtype(t) if t is not None else None for t in scalars)
    scalars = tuple(scalars)
    ND = np.ndarray
    plain_body = all(e[3] == -1 for e in bentries)
    bentries2 = tuple((e[0], e[1], e[2], e[4]) for e in bentries)
    # a condition of one binary entry is computed in the loop itself
    cone = centries[0] if len(centries) == 1 and centries[0][3] == -1 \
        and centries[0][4] == cslot else None
    # the moves: read all, then store, where a move reads a slot another stores into
    dsts = {k for k, _ in moves}
    direct = not any(s in dsts for _, s in moves)
    srcs = tuple(s for _, s in moves)
    dst = tuple(k for k, _ in moves)
    get_moved = operator.itemgetter(*srcs) if len(srcs) > 1 else None
    geterr = np.geterr
    fast = fast_sliced = None
    if cone is not None:
        fslot = nslots + 1

        def unrolled(entries):
            body = []
            for e in entries:
                fn, a, b, c, out = e
                if c == -1:
                    body.append((fn, a, b, out))
                elif c == -2:
                    body.append((fn, fslot, fslot, out))  # (a fused select, see `_lazy_select`)
                else:
                    body.append((_select_entry(a, b, c), fslot, fslot, out))
            return body
        counter = _counter(cone[:3], known, bentries, moves, n)
        fast = _fast_loop(cone[:3], counter, unrolled(bentries), moves, fslot,
                          entries=bentries)
        if sliced is not None and counter is not None:
            fast_sliced = _fast_loop(cone[:3], counter, unrolled(sliced[0]), moves, fslot,
                                     sliced[1], entries=sliced[0])

    def run(ctx, op, args):
        if len(args) != n:
            return None
        f = template[:]
        for k in range(n):
            v = args[k]
            if v.__class__ is not scalars[k]:
                if arrays and k in arrays:
                    dt, shape, stored = arrays[k]
                    if v.__class__ is not ND or v.shape != shape or v.dtype != dt:
                        return None
                    if stored:
                        v = v.copy()
                elif v.__class__ is ND and v.shape == () and v.dtype == dtypes[k]:
                    v = v[()]
                else:
                    return None
            f[k] = v
        err = geterr()
        if err["over"] != "ignore" or err["invalid"] != "ignore" or err["divide"] != "ignore":
            return None              # (integer scalars must wrap quietly)
        deadline = ctx.deadline
        steps0 = ctx.steps
        left = ctx.max_steps - ctx.steps      # iterations allowed before the limit
        if fast is not None and deadline is None:
            try:
                ran = None
                if fast_sliced is not None:
                    ran = fast_sliced(ctx, op, f, left)
                if ran is None:
                    ran = fast(ctx, op, f, left)
            except StableHLOError:
                f[-1] = None
                raise
            except Exception as e:  # noqa: BLE001 - not expected of the admitted ops
                f[-1] = None
                raise InterpreterError(f"{op.name}: {e}", op.where()) from None
            if ran is not None:
                ctx.steps += ran
                if ctx.steps == steps0:
                    return list(args)        # (no iteration ran: the values as they came)
                return [args[k] if k in same else f[k] for k in range(n)]
        ran = 0
        stage = 0
        it = None
        try:
            while True:
                stage = 0
                if cone is not None:
                    c = cone[0](f[cone[1]], f[cone[2]])
                else:
                    it = iter(centries)
                    for fn, a, b, c, out in it:
                        if c == -1:
                            f[out] = fn(f[a], f[b])
                        elif c < 0:
                            f[out] = fn(f)
                        else:
                            f[out] = f[b] if f[a] else f[c]
                    c = f[cslot]
                if not c:
                    break
                ran += 1
                if ran > left or deadline is not None:
                    ctx.steps += ran
                    left -= ran
                    ran = 0
                    ctx.tick(op, counted=True)
                stage = 1
                if plain_body:
                    it = iter(bentries2)
                    for fn, a, b, out in it:
                        f[out] = fn(f[a], f[b])
                else:
                    it = iter(bentries)
                    for fn, a, b, c, out in it:
                        if c == -1:
                            f[out] = fn(f[a], f[b])
                        elif c < 0:
                            f[out] = fn(f)
                        else:
                            f[out] = f[b] if f[a] else f[c]
                if dst:
                    if direct:
                        for k, s in moves:
                            f[k] = f[s]
                    elif get_moved is not None:
                        i = 0
                        for v in get_moved(f):
                            f[dst[i]] = v
                            i += 1
                    else:
                        f[dst[0]] = f[srcs[0]]
        except StableHLOError:
            ctx.steps += ran
            raise
        except Exception as e:  # noqa: BLE001 - not expected of the admitted ops
            ctx.steps += ran
            if it is None:
                raise
            es, os_ = (bentries, bops) if stage else (centries, cops)
            bad = os_[len(es) - operator.length_hint(it) - 1]
            raise InterpreterError(f"{bad.name}: {e}", bad.where()) from None
        ctx.steps += ran
        if ctx.steps == steps0:
            return list(args)        # (no iteration ran: the values as they came)
        return [args[k] if k in same else f[k] for k in range(n)]
    return run


_MISSING = object()


def scalar_loop(ctx, op, args):
    """The results of `while` op `op` run on numpy scalars, or None where it is not a loop
    this module runs (nothing of it has run then)."""
    cache = op_cache(op)
    run = cache.get("scalar_loop", _MISSING)
    if run is _MISSING:
        run = cache["scalar_loop"] = compile_loop(ctx, op)
    if run is None or ctx.trace is not None:
        return None
    return run(ctx, op, args)
