"""Result type inference: the types an op's results must have, computed from its operands,
attributes and regions alone, as the spec's inference rules (and upstream's `infer*Op` shape
functions) give them, including `#stablehlo.bounds` of bounded dynamic dimensions.

`infer_result_types(op)` returns one type per result or raises `InferenceUnavailable` for an op
whose results the spec does not make inferable (convert, broadcast_in_dim, reshape, quantized
element types, ...) or whose inputs are not ranked. Ops with the spec's `elementwise` trait share
one rule (most specific shape and bounds of their operands); the others register a rule with
`@infers(name)`."""
from __future__ import annotations

from typing import Callable, Dict, List

from .. import spec
from ..ir.attributes import StructAttr
from ..ir.types import (ELEMENT_TYPES, ElementType, QuantizedType, TensorType, TokenType, UnrankedTensorType)
from .shapes import bounds, const_ints, elem, int_value, ints, is_tensor, merge_dims_with_bounds, ranked, region_returns


class InferenceUnavailable(Exception):
    """The op's result types are not inferable from its inputs (or no rule covers it)."""


_RULES: Dict[str, Callable] = {}


def infers(*names: str):
    def deco(fn):
        for n in names:
            _RULES[n] = fn
        return fn
    return deco


def infer_result_types(op) -> list:
    fn = _RULES.get(op.name)
    if fn is None and spec.has_op(op.name) and spec.op(op.name).has_trait("elementwise"):
        fn = _elementwise
    if fn is None:
        raise InferenceUnavailable(f"no inference rule for {op.name}")
    if op.name != "stablehlo.uniform_dequantize" and any(
            isinstance(elem(v.type), QuantizedType) for v in list(op.operands) + list(op.results) if is_tensor(v.type)):
        # quantization parameters of results (scales, a permuted quantized dimension) are the
        # result type's to state; the op's own checks relate them to the operands'
        raise InferenceUnavailable("quantized types")
    return fn(op)


# ------------------------------------------------------------------ helpers

def _bounds_attr(bs):
    return StructAttr("stablehlo", "bounds", (("bounds", tuple(bs)),))


def _tensor(shape, bs, et, like=None):
    """A ranked tensor type; bounds only where a dynamic dimension has one. A non-bounds encoding
    of `like` (a sparse layout) carries over when there are no bounds."""
    shape = tuple(shape)
    bs = list(bs or [])
    bs = [b if i < len(shape) and shape[i] is None else None for i, b in enumerate(bs)]
    if any(b is not None for b in bs):
        return TensorType(shape, et, _bounds_attr(bs + [None] * (len(shape) - len(bs))))
    enc = getattr(like, "encoding", None)
    if enc is not None and not (isinstance(enc, StructAttr) and enc.name == "bounds"):
        return TensorType(shape, et, enc)
    return TensorType(shape, et)


def _bs(t):
    b = bounds(t)
    return list(b) if b else [None] * t.rank


def _flag(op, name) -> bool:
    """A unit or boolean attribute: present (true) or absent/false."""
    a = op.attributes.get(name)
    return a is not None and bool(getattr(a, "value", True))


def _need_ranked(*types):
    for t in types:
        if not ranked(t):
            raise InferenceUnavailable(f"{t} is not a ranked tensor")


def _same_shape(t, et):
    """`t`'s shape, bounds and encoding with element type `et`."""
    if not ranked(t):
        return UnrankedTensorType(et)
    return TensorType(t.shape, et, t.encoding)


def _most_specific(types):
    _need_ranked(*types)
    merged = merge_dims_with_bounds(list(types))
    if isinstance(merged, str):
        raise InferenceUnavailable(merged)
    shape, bs = merged
    return shape, bs


def _body_elements(op, region_index, fallback):
    """The element types a reduction-like body returns, or `fallback`'s element types."""
    rets = region_returns(op.regions[region_index]) if len(op.regions) > region_index else None
    if rets:
        return [elem(t) for t in rets]
    return [elem(t) for t in fallback]


def _component(et):
    """The float type of a complex element type."""
    if isinstance(et, ElementType) and et.kind == "complex":
        return ELEMENT_TYPES[et.name[len("complex<"):-1]]
    return et


def _complex_of(et):
    name = f"complex<{et.name}>" if isinstance(et, ElementType) else None
    if name not in ELEMENT_TYPES:
        raise InferenceUnavailable(f"no complex type over {et}")
    return ELEMENT_TYPES[name]


_I1 = ELEMENT_TYPES["i1"]
_PRED_RESULT = {"stablehlo.compare", "stablehlo.is_finite", "chlo.is_inf", "chlo.is_neg_inf", "chlo.is_pos_inf"}
_NOT_INFERABLE_ELEMENT = {"stablehlo.convert", "stablehlo.uniform_quantize", "stablehlo.bitcast_convert"}


def _elementwise(op):
    if op.name in _NOT_INFERABLE_ELEMENT:
        raise InferenceUnavailable(f"{op.name}'s result element type is not inferable")
    ts = [v.type for v in op.operands if is_tensor(v.type)]
    if not ts:
        raise InferenceUnavailable("no tensor operand")
    first = ts[0]
    et = elem(first)
    if op.name in _PRED_RESULT:
        et = _I1
    elif op.name == "stablehlo.complex":
        et = _complex_of(et)
    elif op.name in ("stablehlo.real", "stablehlo.imag", "stablehlo.abs"):
        et = _component(et)
    elif op.name == "stablehlo.uniform_dequantize":
        if not isinstance(et, QuantizedType):
            raise InferenceUnavailable("operand is not quantized")
        et = et.expressed_type
    elif any(isinstance(elem(t), QuantizedType) for t in ts) or any(isinstance(elem(r.type), QuantizedType) for r in op.results):
        raise InferenceUnavailable("quantization parameters of the result are not inferable")
    if not all(ranked(t) for t in ts):
        return [UnrankedTensorType(et)]
    shape, bs = _most_specific(ts)
    return [_tensor(shape, bs, et, like=next((t for t in ts if t.encoding is not None), first))]


# ------------------------------------------------------------------ ops keeping an operand's type

def _operand_types(indices=None):
    def rule(op):
        vals = op.operands if indices is None else [op.operands[i] for i in indices]
        return [v.type for v in vals]
    return rule


infers("stablehlo.while", "stablehlo.optimization_barrier")(_operand_types())
infers("stablehlo.collective_permute")(_operand_types())


@infers("stablehlo.collective_broadcast")
def _collective_broadcast(op):
    # with has_dynamic_root the last operand is the root index, not data
    data = op.operands[:-1] if _flag(op, "has_dynamic_root") else op.operands
    return [v.type for v in data]


@infers("stablehlo.collective_reduce")
def _collective_reduce(op):
    data = op.operands[:-1] if _flag(op, "has_dynamic_root") else op.operands
    ets = _body_elements(op, 0, [data[0].type]) if data else []
    return [_same_shape(v.type, ets[0]) for v in data]
infers("stablehlo.reverse", "stablehlo.cholesky", "stablehlo.reduce_precision",
       "stablehlo.dynamic_update_slice")(_operand_types([0]))
infers("stablehlo.triangular_solve")(_operand_types([1]))


@infers("stablehlo.clamp")
def _clamp(op):
    return [op.operands[1].type]


@infers("stablehlo.sort")
def _sort(op):
    return [v.type for v in op.operands]


@infers("stablehlo.create_token", "stablehlo.after_all", "stablehlo.outfeed", "stablehlo.send")
def _token(op):
    return [TokenType()]


@infers("stablehlo.get_dimension_size")
def _get_dimension_size(op):
    return [TensorType((), ELEMENT_TYPES["i32"])]


@infers("stablehlo.constant", "chlo.constant")
def _constant(op):
    v = op.attributes.get("value")
    t = getattr(v, "type", None)
    if t is None:
        raise InferenceUnavailable("constant value has no type")
    return [t]


@infers("chlo.constant_like")
def _constant_like(op):
    v = op.attributes.get("value")
    et = getattr(v, "type", None)
    et = elem(et) if is_tensor(et) else et
    if not isinstance(et, ElementType):
        raise InferenceUnavailable("constant_like value has no element type")
    return [_same_shape(op.operands[0].type, et)]


# ------------------------------------------------------------------ shape-changing ops

@infers("stablehlo.select")
def _select(op):
    t, f = op.operands[1].type, op.operands[2].type
    shape, bs = _most_specific([t, f])
    return [_tensor(shape, bs, elem(t), like=t)]


@infers("stablehlo.broadcast")
def _broadcast(op):
    a = op.operands[0].type
    _need_ranked(a)
    sizes = tuple(ints(op.attributes.get("broadcast_sizes")))
    return [TensorType(sizes + tuple(a.shape), elem(a))]


@infers("stablehlo.transpose")
def _transpose(op):
    a = op.operands[0].type
    _need_ranked(a)
    perm = ints(op.attributes.get("permutation"))
    bs = _bs(a)
    return [_tensor([a.shape[d] for d in perm], [bs[d] for d in perm], elem(a), like=a)]


@infers("stablehlo.slice")
def _slice(op):
    a = op.operands[0].type
    _need_ranked(a)
    st, li = ints(op.attributes.get("start_indices")), ints(op.attributes.get("limit_indices"))
    sd = op.attributes.get("strides")
    sd = ints(sd) if sd is not None else (1,) * a.rank
    return [_tensor([-(-(l - s) // k) for s, l, k in zip(st, li, sd)], None, elem(a), like=a)]


@infers("stablehlo.dynamic_slice")
def _dynamic_slice(op):
    a = op.operands[0].type
    return [TensorType(tuple(ints(op.attributes.get("slice_sizes"))), elem(a))]


@infers("stablehlo.pad")
def _pad(op):
    a = op.operands[0].type
    _need_ranked(a)
    lo, hi, it = (ints(op.attributes.get(k)) for k in ("edge_padding_low", "edge_padding_high", "interior_padding"))
    shape, out_bs = [], []
    for i, (s, b) in enumerate(zip(a.shape, _bs(a))):
        base = s if s is not None else b
        size = None if base is None else base + lo[i] + hi[i] + max(base - 1, 0) * it[i]
        shape.append(size if s is not None else None)
        out_bs.append(size if s is None else None)
    return [_tensor(shape, out_bs, elem(a), like=a)]


@infers("stablehlo.concatenate")
def _concatenate(op):
    ts = [v.type for v in op.operands]
    _need_ranked(*ts)
    d = int_value(op.attributes.get("dimension"), 0)
    rank = ts[0].rank
    shape, bs = [None] * rank, [None] * rank
    shape[d] = 0
    for t in ts:
        tb = _bs(t)
        for i in range(rank):
            ls, rs, lb, rb = shape[i], t.shape[i], bs[i], tb[i]
            if i == d:
                if ls is not None and rs is not None:
                    shape[i], bs[i] = ls + rs, None
                else:
                    l_, r_ = (ls if ls is not None else lb), (rs if rs is not None else rb)
                    shape[i], bs[i] = None, (l_ + r_ if l_ is not None and r_ is not None else None)
            elif ls is not None or rs is not None:
                shape[i], bs[i] = (ls if ls is not None else rs), None
            else:
                bs[i] = min(lb, rb) if lb is not None and rb is not None else (lb if lb is not None else rb)
    like = next((t for t in ts if t.encoding is not None), ts[0])
    return [_tensor(shape, bs, elem(ts[0]), like=like)]


@infers("stablehlo.set_dimension_size")
def _set_dimension_size(op):
    a = op.operands[0].type
    _need_ranked(a)
    d = int_value(op.attributes.get("dimension"), 0)
    shape, bs = list(a.shape), _bs(a)
    if shape[d] is not None:
        bs[d] = shape[d]
    shape[d] = None
    size = const_ints(op.operands[1])
    if size is not None and len(size) == 1 and bs[d] is not None and size[0] == bs[d]:
        shape[d], bs[d] = size[0], None
    return [_tensor(shape, bs, elem(a))]


@infers("stablehlo.all_to_all")
def _all_to_all(op):
    sd = int_value(op.attributes.get("split_dimension"), 0)
    cd = int_value(op.attributes.get("concat_dimension"), 0)
    n = int_value(op.attributes.get("split_count"), 1)
    out = []
    for v in op.operands:
        a = v.type
        _need_ranked(a)
        shape, bs = list(a.shape), _bs(a)
        for vals in (shape, bs):
            if vals[sd] is not None:
                vals[sd] //= n
            if vals[cd] is not None:
                vals[cd] *= n
        out.append(_tensor(shape, bs, elem(a), like=a))
    return out


@infers("stablehlo.all_reduce")
def _all_reduce(op):
    ets = _body_elements(op, 0, [v.type for v in op.operands])
    return [_same_shape(v.type, ets[0]) for v in op.operands]


@infers("stablehlo.scatter")
def _scatter(op):
    n = len(op.results)
    ins = [v.type for v in op.operands[:n]]
    ets = _body_elements(op, 0, ins)
    return [_same_shape(t, e) for t, e in zip(ins, ets)]


@infers("stablehlo.select_and_scatter")
def _select_and_scatter(op):
    a = op.operands[0].type
    ets = _body_elements(op, 1, [a])
    return [_same_shape(a, ets[0])]


@infers("stablehlo.map")
def _map(op):
    t = op.operands[0].type
    rets = region_returns(op.regions[0])
    if not rets:
        raise InferenceUnavailable("map body has no return")
    return [TensorType(t.shape, elem(rets[0])) if ranked(t) else UnrankedTensorType(elem(rets[0]))]


@infers("stablehlo.reduce")
def _reduce(op):
    n = len(op.results)
    ins = [v.type for v in op.operands[:n]]
    _need_ranked(ins[0])
    dims = set(ints(op.attributes.get("dimensions")))
    ets = _body_elements(op, 0, ins)
    a = ins[0]
    keep = [i for i in range(a.rank) if i not in dims]
    bs = _bs(a)
    return [_tensor([a.shape[i] for i in keep], [bs[i] for i in keep], e, like=a) for e in ets]


def _window_shape(sizes, window):
    out = []
    for s, (w, st, lo, hi, bd, wdl) in zip(sizes, window):
        if s is None:
            out.append(None)
            continue
        dil = (s - 1) * bd + 1 if s > 0 else 0
        padded = dil + lo + hi
        win = (w - 1) * wdl + 1
        out.append(0 if padded < win else (padded - win) // st + 1)
    return out


@infers("stablehlo.reduce_window")
def _reduce_window(op):
    n = len(op.results)
    ins = [v.type for v in op.operands[:n]]
    _need_ranked(*ins)
    R = ins[0].rank

    def opt(key):
        a = op.attributes.get(key)
        vals = ints(a) if a is not None else ()
        return vals if len(vals) else (1,) * R
    wd = ints(op.attributes.get("window_dimensions"))
    p = op.attributes.get("padding")
    pv = ints(p) if p is not None else ()
    pads = [(pv[2 * i], pv[2 * i + 1]) for i in range(R)] if len(pv) == 2 * R else [(0, 0)] * R
    window = list(zip(wd, opt("window_strides"), [a for a, _ in pads], [b for _, b in pads], opt("base_dilations"),
                      opt("window_dilations")))
    ets = _body_elements(op, 0, ins)
    out = []
    for t, e in zip(ins, ets):
        b = bounds(t)
        shape = _window_shape(t.shape, window)
        bs = _window_shape(list(b), window) if b else None
        out.append(_tensor(shape, bs, e, like=t))
    return out


@infers("stablehlo.gather", "stablehlo.dynamic_gather")
def _gather(op):
    a, idx = op.operands[0].type, op.operands[1].type
    _need_ranked(a, idx)
    dn = op.attributes.get("dimension_numbers")
    if not isinstance(dn, StructAttr):
        raise InferenceUnavailable("no dimension numbers")
    g = lambda k: tuple(dn.get(k, ()) or ())
    offset, collapsed, obatch = g("offset_dims"), g("collapsed_slice_dims"), g("operand_batching_dims")
    ivd = int(dn.get("index_vector_dim", 0) or 0)
    if op.name == "stablehlo.gather":
        sizes = ints(op.attributes.get("slice_sizes"))
    else:
        sizes = const_ints(op.operands[2])
        if sizes is None:
            raise InferenceUnavailable("slice_sizes is not a constant")
    offset_sizes = [s for i, s in enumerate(sizes) if i not in collapsed and i not in obatch]
    idx_rank = idx.rank + (1 if ivd == idx.rank else 0)
    rank = len(offset) + idx_rank - 1
    idx_dims = [i for i in range(idx.rank) if i != ivd]
    ib = bounds(idx)
    shape, bs = [], []
    k = j = 0
    for r in range(rank):
        if r in offset:
            shape.append(offset_sizes[k])
            bs.append(None)
            k += 1
        else:
            d = idx_dims[j]
            shape.append(idx.shape[d])
            bs.append(ib[d] if ib else None)
            j += 1
    return [_tensor(shape, bs, elem(a), like=idx if ib else None)]


@infers("stablehlo.fft")
def _fft(op):
    a = op.operands[0].type
    _need_ranked(a)
    kind = str(getattr(op.attributes.get("fft_type"), "value", op.attributes.get("fft_type")))
    length = ints(op.attributes.get("fft_length"))
    shape, bs = list(a.shape), _bs(a)
    et = elem(a)
    if kind.endswith("IRFFT"):
        et = _component(et)
        shape[-1] = length[-1]
        bs[-1] = None
    elif kind.endswith("RFFT"):
        et = _complex_of(et)
        if length[-1] != 0:
            shape[-1] = length[-1] // 2 + 1
        bs[-1] = None
    return [_tensor(shape, bs, et, like=a)]


@infers("stablehlo.rng")
def _rng(op):
    et = elem(op.operands[1].type)
    shape = const_ints(op.operands[2])
    if shape is None:
        st = op.operands[2].type
        n = st.shape[0] if ranked(st) and st.rank == 1 else None
        if n is None:
            raise InferenceUnavailable("shape operand of unknown size")
        return [TensorType((None,) * n, et)]
    return [TensorType(tuple(shape), et)]


def _batch_norm(op, singles: bool):
    a = op.operands[0].type
    _need_ranked(a)
    out = [TensorType(a.shape, elem(a), a.encoding)]
    if singles:
        f = int_value(op.attributes.get("feature_index"), 0)
        b = bounds(a)
        one = _tensor([a.shape[f]], [b[f]] if b else None, elem(a), like=a)
        out += [one, one]
    return out


@infers("stablehlo.batch_norm_inference")
def _bn_inference(op):
    return _batch_norm(op, False)


@infers("stablehlo.batch_norm_training", "stablehlo.batch_norm_grad")
def _bn_training(op):
    return _batch_norm(op, True)


def _least_specific(types):
    """The least specific of compatible types (branches of if/case): a dimension that differs
    becomes dynamic, keeping the larger bound when every branch bounds it."""
    first = types[0]
    if not all(ranked(t) for t in types):
        return UnrankedTensorType(elem(first)) if is_tensor(first) else first
    if not all(isinstance(t, TensorType) and t.rank == first.rank for t in types):
        return first
    shape, bs = [], []
    for i in range(first.rank):
        sizes = {t.shape[i] for t in types}
        if len(sizes) == 1 and None not in sizes:
            shape.append(first.shape[i])
            bs.append(None)
            continue
        shape.append(None)
        cands = [t.shape[i] if t.shape[i] is not None else _bs(t)[i] for t in types]
        bs.append(max(cands) if all(c is not None for c in cands) else None)
    return _tensor(shape, bs, elem(first), like=first)


@infers("stablehlo.if", "stablehlo.case")
def _conditional(op):
    branches = [region_returns(r) for r in op.regions]
    if not branches or any(b is None for b in branches):
        raise InferenceUnavailable("a branch has no return")
    return [_least_specific([b[i] for b in branches]) for i in range(len(branches[0]))]


# ------------------------------------------------------------------ CHLO implicit broadcasting

_CHLO_PRED = {"chlo.broadcast_compare"}


def _numpy_broadcast(types, dims=None):
    """Broadcast ranked shapes as numpy does (trailing alignment, 1 stretches); bounds carry over."""
    rank = max(t.rank for t in types)
    shape, bs = [1] * rank, [None] * rank
    for t in types:
        tb = _bs(t)
        off = rank - t.rank
        for i, (s, b) in enumerate(zip(t.shape, tb)):
            j = off + i
            cur = shape[j]
            if s == 1:
                continue
            if cur == 1:
                shape[j], bs[j] = s, b
            elif cur is None and s is not None:
                shape[j], bs[j] = s, None
            elif cur is None and s is None:
                bs[j] = min(bs[j], b) if bs[j] is not None and b is not None else None
            elif s is not None and cur is not None and s != cur:
                raise InferenceUnavailable(f"incompatible shapes for broadcasting {cur} and {s}")
    return shape, bs


def _chlo_broadcast(op):
    ts = [v.type for v in op.operands]
    et = elem(ts[-1])
    if op.name in _CHLO_PRED:
        et = _I1
    elif op.name == "chlo.broadcast_complex":
        et = _complex_of(elem(ts[0]))
    if not all(ranked(t) for t in ts):
        return [UnrankedTensorType(et)]
    bd = op.attributes.get("broadcast_dimensions")
    if bd is not None and len(ts) == 2 and ts[0].rank != ts[1].rank:
        # the lower-rank operand's dimensions sit at `broadcast_dimensions` of the higher-rank one
        hi, lo = (ts[0], ts[1]) if ts[0].rank > ts[1].rank else (ts[1], ts[0])
        dims = ints(bd)
        if len(dims) != lo.rank:
            raise InferenceUnavailable("broadcast_dimensions does not match the lower rank")
        shape, bs = list(hi.shape), _bs(hi)
        lb = _bs(lo)
        if not all(0 <= d < hi.rank for d in dims):
            raise InferenceUnavailable("broadcast_dimensions out of range")
        for k, d in enumerate(dims):
            s, b = lo.shape[k], lb[k]
            if s == 1 or shape[d] == s:
                continue
            if shape[d] == 1 or shape[d] is None:
                shape[d], bs[d] = s, (b if s is None else None)
            elif s is not None:
                raise InferenceUnavailable(f"incompatible shapes for broadcasting {shape[d]} and {s}")
    else:
        shape, bs = _numpy_broadcast(ts)
    return [_tensor(shape, bs, et)]


for _name in [o.name for o in spec.ops() if o.name.startswith("chlo.broadcast_")]:
    _RULES[_name] = _chlo_broadcast

for _name in ("chlo.next_after", "chlo.polygamma", "chlo.zeta", "chlo.mulhi"):
    _RULES.setdefault(_name, _elementwise)


@infers("chlo.top_k")
def _top_k(op):
    a = op.operands[0].type
    i32 = ELEMENT_TYPES["i32"]
    if not ranked(a):
        return [UnrankedTensorType(elem(a)), UnrankedTensorType(i32)]
    k = int_value(op.attributes.get("k"), 0)
    shape, bs = list(a.shape[:-1]) + [k], _bs(a)[:-1] + [None]
    return [_tensor(shape, bs, elem(a), like=a), _tensor(shape, bs, i32, like=a)]


def inferred_types_problem(op):
    """A message when an op's declared result types are not compatible with the types inferred
    for it (upstream's InferTypeOpInterface check), else None; None as well where no rule
    infers them."""
    from .shapes import types_compatible
    try:
        inferred = infer_result_types(op)
    except (InferenceUnavailable, IndexError, KeyError, TypeError, ValueError, ZeroDivisionError):
        # not inferable, or inputs malformed in a way the op's own checks judge
        return None
    got = [r.type for r in op.results]
    if len(inferred) == len(got) and all(types_compatible(a, b) for a, b in zip(inferred, got)):
        return None
    return (f"inferred type(s) '{', '.join(map(str, inferred))}' are incompatible with return type(s) of "
            f"operation '{', '.join(map(str, got))}'")


__all__: List[str] = ["InferenceUnavailable", "infer_result_types", "inferred_types_problem", "infers"]
