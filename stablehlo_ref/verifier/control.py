"""Verifiers of control flow and calls: while, if, case, the func dialect (func, call, return),
stablehlo.return, composite, async_start/async_done, custom_call, and the check dialect ops."""
from __future__ import annotations

from ..ir.attributes import DenseElementsAttr, DictAttr, StringAttr, StructAttr, SymbolRefAttr
from ..ir.types import ElementType, FunctionType, OpaqueType, TensorType, TokenType, TupleType
from . import quantized
from .registry import verifier
from .shapes import (elem, future_members, ints, is_pred, is_tensor, ranked, region_args, region_returns,
                     shapes_compatible, simple_tensor_type, types_compatible)


@verifier("stablehlo.while")
def while_(op, check):
    ts = [v.type for v in op.operands]
    cond, body = op.regions
    ca = region_args(cond)
    check(len(ca) == len(ts) and all(types_compatible(a, b) for a, b in zip(ca, ts)), "C1",
          "cond must take the loop value types")
    cr = region_returns(cond)
    if cr is not None:
        check(len(cr) == 1 and ranked(cr[0]) and cr[0].rank == 0 and is_pred(cr[0]), "C1",
              f"cond must return a 0-d tensor of i1, returns ({', '.join(map(str, cr))})")
    ba = region_args(body)
    check(len(ba) == len(ts) and all(types_compatible(a, b) for a, b in zip(ba, ts)), "C2",
          "body must take the loop value types")
    br = region_returns(body)
    if br is not None:
        check(len(br) == len(ts) and all(types_compatible(a, b) for a, b in zip(br, ts)), "C2",
              "body must return the loop value types")
    check(len(op.results) == len(ts) and all(types_compatible(r.type, t) for r, t in zip(op.results, ts)), "C3",
          "results must have the operand types")


def _branches(op, check, regions, ids):
    c_args, c_same, c_res = ids
    rets = []
    for i, r in enumerate(regions):
        check(not region_args(r), c_args, f"branch {i} must take no arguments")
        rets.append(region_returns(r))
    known = [r for r in rets if r is not None]
    for r in known[1:]:
        check(len(r) == len(known[0]) and all(types_compatible(a, b) for a, b in zip(r, known[0])), c_same,
              "all branches must return the same types")
    if known:
        check(len(op.results) == len(known[0]) and all(types_compatible(v.type, t) for v, t in zip(op.results, known[0])),
              c_res, "results must have the types the branches return")


@verifier("stablehlo.if")
def if_(op, check):
    p = op.operands[0].type
    check(ranked(p) and p.rank == 0 and is_pred(p), "C1", f"pred must be a 0-d tensor of i1, got {p}")
    _branches(op, check, op.regions, ("C1", "C2", "C3"))


@verifier("stablehlo.case")
def case(op, check):
    p = op.operands[0].type
    check(ranked(p) and p.rank == 0, "C1", f"index must be a 0-d tensor of i32, got {p}")
    check(len(op.regions) >= 1, "C1", "expects at least one branch")
    _branches(op, check, op.regions, ("C2", "C3", "C4"))


@verifier("func.return")
def func_return(op, check):
    parent = check.func
    if parent is None:
        return
    ft = parent.attributes.get("function_type")
    ft = getattr(ft, "type", None)
    if not isinstance(ft, FunctionType):
        return
    got = [v.type for v in op.operands]
    check(len(got) == len(ft.results) and all(types_compatible(a, b) for a, b in zip(got, ft.results)), "",
          f"returned types ({', '.join(map(str, got))}) do not match the function's result types "
          f"({', '.join(map(str, ft.results))})")


@verifier("func.call")
def func_call(op, check):
    callee = op.attributes.get("callee")
    name = callee.root if isinstance(callee, SymbolRefAttr) else getattr(callee, "value", None)
    if check.module is None or name is None:
        return
    fns = check.module.functions
    check(name in fns, "", f"'{name}' does not reference a valid function")
    ft = getattr(fns[name].attributes.get("function_type"), "type", None)
    if not isinstance(ft, FunctionType):
        return
    check(len(op.operands) == len(ft.inputs), "", f"expects {len(ft.inputs)} operand(s) for @{name}, got {len(op.operands)}")
    for i, (v, t) in enumerate(zip(op.operands, ft.inputs)):
        check(types_compatible(v.type, t), "", f"operand #{i} type {v.type} does not match @{name}'s input type {t}")
    check(len(op.results) == len(ft.results), "", f"expects {len(ft.results)} result(s) from @{name}, got {len(op.results)}")
    for i, (v, t) in enumerate(zip(op.results, ft.results)):
        check(types_compatible(v.type, t), "", f"result #{i} type {v.type} does not match @{name}'s result type {t}")


@verifier("func.func")
def func_func(op, check):
    ft = getattr(op.attributes.get("function_type"), "type", None)
    if isinstance(ft, FunctionType):
        for t in list(ft.inputs) + list(ft.results):
            msg = quantized.type_problem(t)
            check(msg is None, "", f"function type {t}: {msg}")
    if not isinstance(ft, FunctionType) or not op.regions or not op.regions[0].blocks:
        return
    args = region_args(op.regions[0])
    check(len(args) == len(ft.inputs) and all(types_compatible(a, b) for a, b in zip(args, ft.inputs)), "",
          "entry block arguments do not match the function type")


@verifier("stablehlo.return")
def return_(op, check):
    check(all(is_tensor(v.type) or isinstance(v.type, (TokenType, TupleType)) or not isinstance(v.type, ElementType)
              for v in op.operands), "", "stablehlo.return returns tensors, tokens or tuples")


@verifier("stablehlo.composite")
def composite(op, check):
    name = getattr(op.attributes.get("name"), "value", "")
    import re
    check(re.fullmatch(r"[A-Za-z_][\w$]*(\.[\w$]+)+", name) is not None, "C1",
          f"name '{name}' must be a valid namespaced op name")
    callee = op.attributes.get("decomposition")
    if isinstance(callee, SymbolRefAttr) and check.module is not None:
        fns = check.module.functions
        check(callee.root in fns, "C2", f"decomposition @{callee.root} does not reference a function")
        ft = getattr(fns[callee.root].attributes.get("function_type"), "type", None)
        if isinstance(ft, FunctionType):
            check(len(ft.inputs) == len(op.operands) and all(types_compatible(v.type, t) for v, t in zip(op.operands, ft.inputs)),
                  "C3", f"operand types must match the decomposition's input types ({', '.join(map(str, ft.inputs))})")
            check(len(ft.results) == len(op.results) and all(types_compatible(v.type, t) for v, t in zip(op.results, ft.results)),
                  "C4", f"result types must match the decomposition's result types ({', '.join(map(str, ft.results))})")


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
    check(len(args) == len(op.operands), "C3",
          f"number of operands ({len(op.operands)}) must match number of region arguments ({len(args)})")
    for i, (a, v) in enumerate(zip(args, op.operands)):
        check(types_compatible(a, v.type), "C3",
              f"operand type '{v.type}' at index {i} must match region argument type '{a}'")
    _future_holds(check, "C4", op.results[0].type if len(op.results) == 1 else None, [r.type for r in inner.results])


def _future_holds(check, cid, fut, types):
    """A `!stablehlo.future<T...>` (opaque to the parser) must hold types compatible with `types`;
    members spelled in forms `simple_tensor_type` does not read are left unchecked."""
    members = future_members(fut)
    if members is None:
        return
    held = [simple_tensor_type(m) for m in members]
    check(len(members) == len(types), cid, f"{fut} holds {len(members)} type(s), expected {len(types)}")
    for h, m, t in zip(held, members, types):
        check(h is None or not ranked(t) or types_compatible(h, t), cid,
              f"inferred type(s) '{', '.join(map(str, types))}' are incompatible with '{fut}'")


@verifier("stablehlo.async_done")
def async_done(op, check):
    t = op.operands[0].type
    check(future_members(t) is not None, "", f"operand must be a !stablehlo.future, got {t}")
    _future_holds(check, "C1", t, [r.type for r in op.results])


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
    for name, lays in (("operand_layouts", ol), ("result_layouts", rl)):
        # each layout is a 1-d tensor of index values (upstream's LayoutAttr)
        for lay in getattr(lays, "elements", ()) or ():
            t = getattr(lay, "type", None)
            check(isinstance(lay, DenseElementsAttr) and isinstance(t, TensorType) and t.rank == 1
                  and getattr(t.element_type, "name", None) == "index", "",
                  f"{name} must be an array of 1-d index tensors, got {lay}")
    bc = op.attributes.get("backend_config")
    check(bc is None or isinstance(bc, (StringAttr, DictAttr)), "",
          f"backend_config must be a string or a dictionary, got {bc}")
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


@verifier("interpreter.run_parallel")
def run_parallel(op, check):
    """The reference interpreter's process grid: `programs` is a non-empty rectangle (replicas x
    partitions) of functions of the module; the op's inputs and results are theirs, concatenated;
    `infeed` names functions returning one tensor each."""
    programs = op.attributes.get("programs")
    rows = [getattr(r, "elements", None) for r in getattr(programs, "elements", ())]
    check(bool(rows) and rows[0] is not None and len(rows[0]) > 0, "", "`programs` attribute cannot be empty")
    fns = check.module.functions if check.module is not None else {}

    def lookup(ref):
        name = ref.root if isinstance(ref, SymbolRefAttr) else getattr(ref, "value", None)
        check(name in fns, "", f'Function "{name}" not found')
        return name, getattr(fns[name].attributes.get("function_type"), "type", None)

    n_args = n_results = 0
    for row in rows:
        check(row is not None and len(row) == len(rows[0]), "",
              f"Sizes of second dimension of `programs` should all match {len(rows[0])} but got "
              f"{len(row) if row is not None else 'a non-array'}")
        for ref in row:
            _, ft = lookup(ref)
            if isinstance(ft, FunctionType):
                n_args += len(ft.inputs)
                n_results += len(ft.results)
    check(len(op.operands) == n_args, "", f"Number of inputs ({len(op.operands)}) should match the sum of the "
          f"number of inputs of all programs ({n_args})")
    check(len(op.results) == n_results, "", f"Number of results ({len(op.results)}) should match the sum of the "
          f"number of results of all programs ({n_results})")
    infeed = op.attributes.get("infeed")
    if infeed is not None:
        refs = getattr(infeed, "elements", ())
        check(len(refs) > 0, "", "infeed attribute is optional or should not be empty")
        for ref in refs:
            name, ft = lookup(ref)
            if isinstance(ft, FunctionType):
                check(len(ft.results) == 1, "", f'Function "{name}" should return 1 tensor but returns {len(ft.results)}')
                check(is_tensor(ft.results[0]), "",
                      f'Function "{name}" should return a tensor type, but instead returns \'{ft.results[0]}\'')
