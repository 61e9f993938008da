"""Verifiers of ops outside the families: custom_call (layouts, output-operand aliases, backend
config), rng, rng_bit_generator, select_and_scatter, optimization_barrier, outfeed, tokens,
replica/partition ids, async_start/async_done, dynamic_iota, real_dynamic_slice, einsum and
torch_index_select, and the region terminator `stablehlo.return`."""
from __future__ import annotations

from ..ir.attributes import DictAttr, EnumAttr, IntegerAttr, StringAttr, StructAttr
from ..ir.types import ElementType, TensorType, TokenType, TupleType
from .core import verifier
from .shapes import (const_ints, dim_ok, elem, elems_equal, int_value, ints, is_pred, is_tensor, promotable,
                     ranked, shape_matches, shapes_compatible, types_compatible)


# ------------------------------------------------------------------ custom_call

def _check_layout(check, layout, t):
    lay = ints(layout)
    if isinstance(t, TokenType):
        check(len(lay) == 0, "", f"Only tensor types can have non-empty layout: {list(lay)} of type {t}")
        return
    if ranked(t):
        check(sorted(lay) == list(range(t.rank)), "",
              f"incorrect layout {list(lay)} for type '{t}', layout must be a permutation of [0, {t.rank})")


def _tuple_member(t, path):
    for i in path:
        if not isinstance(t, TupleType) or not 0 <= i < len(t.types):
            return None
        t = t.types[i]
    return t


@verifier("stablehlo.custom_call")
def custom_call(op, check):
    ol, rl = op.attributes.get("operand_layouts"), op.attributes.get("result_layouts")
    check((ol is None) == (rl is None), "",
          "Layout attributes should be specified for either both operands and results or none")
    if ol is not None and rl is not None:
        ols, rls = list(getattr(ol, "elements", ())), list(getattr(rl, "elements", ()))
        check(len(ols) == len(op.operands), "",
              f"Number of operands must match the number of operand layouts, {len(op.operands)} != {len(ols)}")
        results = [r.type for r in op.results]
        if len(results) == 1 and isinstance(results[0], TupleType):
            results = list(results[0].types)
        check(len(rls) == len(results), "",
              f"Number of results must match the number of result layouts, {len(results)} != {len(rls)}")
        for t in [v.type for v in op.operands] + results:
            check(not isinstance(t, TupleType), "", "Tuple types are not fully supported with layout constraints yet")
        for lay, v in zip(ols, op.operands):
            _check_layout(check, lay, v.type)
        for lay, t in zip(rls, results):
            _check_layout(check, lay, t)
    aliases = op.attributes.get("output_operand_aliases")
    for a in getattr(aliases, "elements", ()) or ():
        if not isinstance(a, StructAttr):
            continue
        f = dict(a.fields)
        oi = int(f.get("operand_index", 0))
        check(0 <= oi < len(op.operands), "",
              f"expects operandIndex in the output_operand_alias attribute to be in range [0, {len(op.operands)}); got: {oi}")
        ot = _tuple_member(op.operands[oi].type, tuple(f.get("operand_tuple_indices", ()) or ()))
        check(ot is not None, "", "operand_tuple_indices in the output_operand_alias attribute out of bounds")
        out = op.results[0].type if len(op.results) == 1 else TupleType(tuple(r.type for r in op.results))
        rt = _tuple_member(out, tuple(f.get("output_tuple_indices", ()) or ()))
        check(rt is not None, "", "output_tuple_indices in the output_operand_alias attribute out of bounds")
        check(types_compatible(ot, rt), "", f"shapes mismatch in the output_operand_alias attribute: operand part has "
              f"type {ot} and output part has type {rt}")
    api = op.attributes.get("api_version")
    api = getattr(api, "value", api)
    bc = op.attributes.get("backend_config")
    if api in (4, "API_VERSION_TYPED_FFI") and bc is not None:
        check(not isinstance(bc, StringAttr), "",
              "backend_config for api_version API_VERSION_TYPED_FFI must be a dictionary attribute")
    elif api is not None and bc is not None:
        check(not isinstance(bc, DictAttr), "",
              f"backend_config for api_version {api} must be a string attribute")


# ------------------------------------------------------------------ random numbers

@verifier("stablehlo.rng")
def rng(op, check):
    a, b, shape = (v.type for v in op.operands)
    r = op.results[0].type
    check(elems_equal(a, b) and elems_equal(a, r), "C1", f"a, b and result must have the same element type (got {a}, {b}, {r})")
    dist = getattr(op.attributes.get("rng_distribution"), "value", None)
    if dist == "NORMAL":
        e = elem(r)
        check(isinstance(e, ElementType) and e.is_float, "C2", f"NORMAL distribution requires a float result, got {r}")
    if ranked(shape) and shape.rank == 1 and shape.shape[0] is not None and ranked(r):
        check(shape.shape[0] == r.rank, "C3", f"shape operand has {shape.shape[0]} entries but the result has rank {r.rank}")
    sizes = const_ints(op.operands[2])
    if sizes is not None:
        check(shape_matches(r, sizes), "C3", f"result {r} does not have the shape {list(sizes)}")


@verifier("stablehlo.rng_bit_generator")
def rng_bit_generator(op, check):
    s, so = op.operands[0].type, op.results[0].type
    check(types_compatible(s, so), "C1", f"initial_state and output_state must have the same type (got {s}, {so})")
    alg = getattr(op.attributes.get("rng_algorithm"), "value", "DEFAULT")
    if ranked(s) and s.is_static:
        n = s.num_elements
        if alg == "THREE_FRY":
            check(n == 2, "C2", f"THREE_FRY requires an initial state of 2 elements, got {s}")
        elif alg == "PHILOX":
            check(n in (2, 3), "C2", f"PHILOX requires an initial state of 2 or 3 elements, got {s}")


# ------------------------------------------------------------------ windows

@verifier("stablehlo.select_and_scatter")
def select_and_scatter(op, check):
    a, src, init = (v.type for v in op.operands)
    r = op.results[0].type
    check(elems_equal(a, src), "C1", f"operand and source must have the same element type (got {a}, {src})")
    check(elems_equal(a, init), "C3", f"init_value must have the operand's element type (got {init})")
    check(shapes_compatible(a, r), "C11", f"result must have the operand's shape (got {a}, {r})")
    if ranked(a):
        R = a.rank
        wd = ints(op.attributes.get("window_dimensions")) if op.attributes.get("window_dimensions") is not None else (1,) * R
        ws = ints(op.attributes.get("window_strides")) if op.attributes.get("window_strides") is not None else (1,) * R
        check(len(wd) == R, "C4", f"window_dimensions must have {R} entries, has {len(wd)}")
        check(all(x > 0 for x in wd), "C5", f"window_dimensions {list(wd)} must be positive")
        check(len(ws) == R, "C6", f"window_strides must have {R} entries, has {len(ws)}")
        check(all(x > 0 for x in ws), "C7", f"window_strides {list(ws)} must be positive")
        p = op.attributes.get("padding")
        pads = [(0, 0)] * R
        if p is not None:
            shp = tuple(getattr(getattr(p, "type", None), "shape", ()))
            check(shp == (R, 2) or (R == 0 and shp in ((0,), (0, 2))), "C8", f"padding must have shape [{R}, 2], has {list(shp)}")
            v = ints(p)
            pads = [(v[2 * i], v[2 * i + 1]) for i in range(R)]
        if ranked(src):
            expect = []
            for s, w, st, (lo, hi) in zip(a.shape, wd, ws, pads):
                if s is None:
                    expect.append(None)
                    continue
                padded = s + lo + hi
                expect.append(0 if padded < w else (padded - w) // st + 1)
            check(shape_matches(src, expect), "C2", f"source shape {src} must be the window count {expect}")
    sel = op.regions[0] if op.regions else None
    if sel is not None and sel.blocks:
        args = [x.type for x in sel.blocks[0].arguments]
        check(len(args) == 2 and all(ranked(t) and t.rank == 0 and elems_equal(t, a) for t in args), "C9",
              f"select must take two 0-d tensors of {elem(a)}")
        term = sel.blocks[-1].operations[-1] if sel.blocks[-1].operations else None
        if term is not None:
            rets = [v.type for v in term.operands]
            check(len(rets) == 1 and ranked(rets[0]) and rets[0].rank == 0 and is_pred(rets[0]), "C9",
                  "select must return a 0-d tensor of i1")
    if len(op.regions) > 1 and op.regions[1].blocks:
        sc = op.regions[1]
        args = [x.type for x in sc.blocks[0].arguments]
        check(len(args) == 2 and all(ranked(t) and t.rank == 0 for t in args), "C10", "scatter must take two 0-d tensors")
        check(promotable(elem(a), elem(args[0])), "C10", f"scatter argument type {args[0]} is not promotable from {elem(a)}")
        check(elems_equal(r, args[0]), "C12", f"result element type must be the scatter body's ({args[0]})")


# ------------------------------------------------------------------ tokens, ids, barriers

@verifier("stablehlo.optimization_barrier")
def optimization_barrier(op, check):
    ins, outs = [v.type for v in op.operands], [v.type for v in op.results]
    check(len(ins) == len(outs) and all(types_compatible(a, b) for a, b in zip(ins, outs)), "C1",
          f"results ({', '.join(map(str, outs))}) must have the operand types ({', '.join(map(str, ins))})")


@verifier("stablehlo.outfeed")
def outfeed(op, check):
    check(len(op.operands) >= 1 and isinstance(op.operands[-1].type, TokenType), "",
          "the last operand must be a token")
    check(all(not isinstance(v.type, TokenType) for v in op.operands[:-1]), "", "all inputs before the token must be tensors")


@verifier("stablehlo.after_all", "stablehlo.create_token")
def tokens(op, check):
    check(all(isinstance(v.type, TokenType) for v in op.operands), "", "all inputs must be tokens")
    check(len(op.results) == 1 and isinstance(op.results[0].type, TokenType), "", "the result must be a token")


@verifier("stablehlo.replica_id", "stablehlo.partition_id")
def process_id(op, check):
    r = op.results[0].type
    e = elem(r)
    check(ranked(r) and r.rank == 0 and isinstance(e, ElementType) and e.name == "ui32", "",
          f"result must be a 0-d tensor of ui32, got {r}")


# ------------------------------------------------------------------ async

@verifier("stablehlo.async_start")
def async_start(op, check):
    if not op.regions or not op.regions[0].blocks:
        return
    body = [o for o in op.regions[0].blocks[0].operations]
    check(len(body) == 2, "C1", f"body must hold exactly one operation followed by a return, holds {len(body)} ops")
    inner = body[0]
    allowed = {"stablehlo.all_reduce", "stablehlo.all_gather", "stablehlo.all_to_all", "stablehlo.collective_permute",
               "stablehlo.reduce_scatter", "stablehlo.collective_broadcast", "stablehlo.slice",
               "stablehlo.dynamic_slice", "stablehlo.dynamic_update_slice"}
    check(inner.name in allowed, "C2", f"{inner.name} may not run asynchronously")
    args = [a.type for a in op.regions[0].blocks[0].arguments]
    check(len(args) == len(op.operands) and all(types_compatible(a, v.type) for a, v in zip(args, op.operands)), "C3",
          "the operands of async_start must be those of the operation in its body")


@verifier("stablehlo.async_done")
def async_done(op, check):
    t = op.operands[0].type
    inner = getattr(t, "types", None) or getattr(t, "results", None)
    if inner is not None:
        inner = list(inner)
        check(len(inner) == len(op.results) and all(types_compatible(a, r.type) for a, r in zip(inner, op.results)), "C1",
              f"results must be the types the future {t} holds")


# ------------------------------------------------------------------ dynamic shapes

@verifier("stablehlo.dynamic_iota")
def dynamic_iota(op, check):
    s, r = op.operands[0].type, op.results[0].type
    d = int_value(op.attributes.get("iota_dimension"), 0)
    if ranked(s) and s.rank == 1 and s.shape[0] is not None:
        check(0 <= d < s.shape[0], "C1", f"iota_dimension {d} must be below the number of entries of output_shape ({s.shape[0]})")
        if ranked(r):
            check(r.rank == s.shape[0], "C2", f"result rank {r.rank} must be the number of entries of output_shape ({s.shape[0]})")
    elif ranked(r):
        check(0 <= d < r.rank, "C1", f"iota_dimension {d} is out of range for {r}")
    sizes = const_ints(op.operands[0])
    if sizes is not None and ranked(r):
        check(shape_matches(r, sizes), "C2", f"result {r} does not have the shape {list(sizes)}")


@verifier("stablehlo.real_dynamic_slice")
def real_dynamic_slice(op, check):
    a, r = op.operands[0].type, op.results[0].type
    check(elems_equal(a, r), "", f"operand and result must have the same element type (got {a}, {r})")
    check(all(types_compatible(op.operands[1].type, v.type) for v in op.operands[2:]), "",
          "start_indices, limit_indices and strides must have the same type")
    if ranked(a):
        for v in op.operands[1:]:
            t = v.type
            if ranked(t) and t.rank == 1 and t.shape[0] is not None:
                check(t.shape[0] == a.rank, "", f"index operands must have {a.rank} entries, got {t}")
    st, li, sd = (const_ints(v) for v in op.operands[1:4])
    if sd is not None:
        check(all(x > 0 for x in sd), "", f"strides {list(sd)} must be positive")
    if st is not None and li is not None:
        check(all(0 <= x <= y for x, y in zip(st, li)), "", "start indices must be non-negative and not above the limits")


# ------------------------------------------------------------------ legacy ops

def _einsum_terms(config):
    lhs, _, out = config.partition("->")
    return [t.strip() for t in lhs.split(",")], out.strip()


@verifier("stablehlo.einsum", "stablehlo.unary_einsum")
def einsum(op, check):
    cfg = getattr(op.attributes.get("einsum_config"), "value", None)
    if not isinstance(cfg, str):
        return
    check("->" in cfg, "", f"einsum_config '{cfg}' must have the form 'inputs->output'")
    ins, out = _einsum_terms(cfg)
    check(len(ins) == len(op.operands), "", f"einsum_config '{cfg}' names {len(ins)} input(s) for {len(op.operands)} operand(s)")
    if "." in cfg:
        return
    sizes = {}
    for term, v in zip(ins, op.operands):
        t = v.type
        if not ranked(t):
            continue
        check(len(term) == t.rank, "", f"einsum term '{term}' does not match the rank of {t}")
        for c, s in zip(term, t.shape):
            check(dim_ok(sizes.get(c), s), "", f"einsum label '{c}' has different sizes")
            if s is not None:
                sizes[c] = s
    r = op.results[0].type
    check(all(c in "".join(ins) for c in out), "", f"output labels of '{cfg}' must appear in the inputs")
    if ranked(r):
        check(len(out) == r.rank and all(dim_ok(sizes.get(c), s) for c, s in zip(out, r.shape)), "",
              f"result {r} does not match einsum_config '{cfg}'")


@verifier("stablehlo.torch_index_select")
def torch_index_select(op, check):
    a, idx, r = op.operands[0].type, op.operands[1].type, op.results[0].type
    d = int_value(op.attributes.get("dim"), 0)
    b = int_value(op.attributes.get("batch_dims"), 0)
    check(elems_equal(a, r), "", f"operand and result must have the same element type (got {a}, {r})")
    if ranked(a):
        check(0 <= d < a.rank, "", f"dim {d} is out of range for {a}")
        check(0 <= b <= d, "", f"batch_dims {b} must be between 0 and dim {d}")
    if ranked(a) and ranked(idx) and ranked(r) and 0 <= d < a.rank and b <= idx.rank:
        expect = list(a.shape[:d]) + list(idx.shape[b:]) + list(a.shape[d + 1:])
        check(shape_matches(r, expect), "", f"result {r} does not match the inferred shape {expect}")


# ------------------------------------------------------------------ terminators and checks

@verifier("stablehlo.return")
def return_(op, check):
    check(all(is_tensor(v.type) or isinstance(v.type, (TokenType, TupleType)) or not isinstance(v.type, ElementType)
              for v in op.operands), "", "stablehlo.return returns tensors, tokens or tuples")


@verifier("check.expect_eq", "check.expect_almost_eq", "check.expect_close", "check.expect_serialized_eq")
def check_expect_pair(op, check):
    if len(op.operands) >= 2:
        a, b = op.operands[0].type, op.operands[1].type
        check(shapes_compatible(a, b), "", f"actual and expected must have the same shape (got {a}, {b})")


@verifier("check.expect_eq_const", "check.expect_almost_eq_const")
def check_expect_const(op, check):
    v = op.attributes.get("value")
    vt = getattr(v, "type", None)
    if op.operands and isinstance(vt, TensorType):
        check(shapes_compatible(op.operands[0].type, vt), "",
              f"the operand {op.operands[0].type} and the expected value {vt} must have the same shape")
