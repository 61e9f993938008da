"""Resource limits for input from strangers, checked before anything is allocated.

One `Limits` value travels through parse, read, verify and run; each field has a documented
default, a command-line flag and the API argument of the same name. A limit that would be
exceeded raises `LimitError` naming the op or construct, its location and the flag.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Optional, Sequence

from .errors import LimitError

GiB = 1 << 30


@dataclass(frozen=True)
class Limits:
    # The largest single tensor, checked from its type before allocation.
    max_tensor_elements: int = 1 << 31
    max_tensor_bytes: int = 4 * GiB
    # The total of the values alive at once during a run.
    max_live_bytes: int = 16 * GiB
    # Loop iterations over a whole run (`while` bodies and the like); None = unbounded.
    max_steps: Optional[int] = None
    # Wall-clock seconds for a run; None = unbounded.
    timeout: Optional[float] = None
    # Nesting of regions (text, bytecode, interpreter) and of text brackets.
    max_nesting: int = 10_000

    def replace(self, **kw) -> "Limits":
        return replace(self, **kw)


DEFAULT = Limits()

FLAGS = {
    "max_tensor_elements": "--max-tensor-elements",
    "max_tensor_bytes": "--max-tensor-bytes",
    "max_live_bytes": "--max-live-bytes",
    "max_steps": "--max-steps",
    "timeout": "--timeout",
    "max_nesting": "--max-nesting",
}


def check_tensor(shape: Sequence[Optional[int]], elem_bits: int, what: str,
                 location: Optional[str] = None, limits: Limits = DEFAULT) -> int:
    """Raise LimitError if a tensor of `shape` (static dims; None/negative dims are ignored)
    with `elem_bits`-bit elements is over the limits; return its element count."""
    n = math.prod(d for d in shape if d is not None and d >= 0) if shape else 1
    if n > limits.max_tensor_elements:
        raise LimitError(f"{what}: tensor of {n} elements is over the limit of "
                         f"{limits.max_tensor_elements}", location, FLAGS["max_tensor_elements"])
    nbytes = (n * elem_bits + 7) // 8
    if nbytes > limits.max_tensor_bytes:
        raise LimitError(f"{what}: tensor of {nbytes} bytes is over the limit of "
                         f"{limits.max_tensor_bytes} bytes", location, FLAGS["max_tensor_bytes"])
    return n
