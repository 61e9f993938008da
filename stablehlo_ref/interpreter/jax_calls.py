"""Custom calls that JAX writes into exported programs and that have a meaning the
interpreter can honour without any JAX code:

- `@shape_assertion(%pred, %dim...)` (jax.export of shape-polymorphic functions, api_version 2,
  `error_message` with `{0}`, `{1}`... standing for the dimension operands): fails the run with
  that message when `%pred` is false, as JAX's runtime does.
"""
from __future__ import annotations

import numpy as np

from ..errors import InterpreterError


def _shape_assertion(ctx, op, pred=None, *dims):
    if pred is None:
        raise InterpreterError("custom_call @shape_assertion needs a predicate operand")
    if bool(np.all(np.asarray(pred))):
        return []
    msg = op.attributes.get("error_message")
    text = getattr(msg, "value", None) or "shape assertion failed"
    values = [int(np.asarray(d).reshape(-1)[0]) if np.asarray(d).size else 0 for d in dims]
    try:
        text = text.format(*values)
    except (IndexError, KeyError, ValueError):
        pass
    raise InterpreterError(f"shape assertion failed: {text}", op.where())


JAX_CUSTOM_CALLS = {
    "shape_assertion": _shape_assertion,
}
