"""Verifiers of the neural-network ops: the batch_norm family and einsum/unary_einsum."""
from __future__ import annotations

from .registry import verifier
from .shapes import dim_ok, elem, elems_equal, int_value, ranked, shapes_compatible


def _batch_norm(op, check, ids):
    """The batch_norm family: `ids` gives, for each value after the operand (operands, then
    results), the constraint that fixes its size (1-d: the feature count; else the operand's
    shape)."""
    a = op.operands[0].type
    fi = int_value(op.attributes.get("feature_index"), 0)
    check(fi >= 0, "C1", f"feature_index {fi} must be non-negative")
    if not ranked(a):
        return
    check(fi < a.rank, "C1", f"feature_index {fi} must be smaller than the operand rank {a.rank}")
    n = a.shape[fi]
    vals = list(op.operands[1:]) + list(op.results)
    for v, cid in zip(vals, ids):
        t = v.type
        check(elems_equal(t, a, True), "C2", f"{t} must have the operand's element type {elem(a)}")
        if ranked(t) and t.rank == 1:
            check(dim_ok(t.shape[0], n), cid, f"1-d operands must have {n} entries (the feature count), got {t}")
        elif ranked(t):
            check(shapes_compatible(t, a), cid, f"{t} must have the operand's shape {a}")


@verifier("stablehlo.batch_norm_inference")
def batch_norm_inference(op, check):
    # scale, offset, mean, variance; result
    _batch_norm(op, check, ("C3", "C4", "C5", "C6", "C7"))


@verifier("stablehlo.batch_norm_training")
def batch_norm_training(op, check):
    # scale, offset; output, batch_mean, batch_var
    _batch_norm(op, check, ("C3", "C4", "C7", "C5", "C6"))


@verifier("stablehlo.batch_norm_grad")
def batch_norm_grad(op, check):
    # scale, mean, variance, grad_output; grad_operand, grad_scale, grad_offset
    _batch_norm(op, check, ("C5", "C4", "C4", "C3", "C3", "C4", "C4"))


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
