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
