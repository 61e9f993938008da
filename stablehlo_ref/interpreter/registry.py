"""The kernel registry, keyed by op name: `@kernel("stablehlo.add")`."""
from __future__ import annotations

from typing import Callable, Dict

KERNELS: Dict[str, Callable] = {}


def kernel(*names: str):
    def deco(fn):
        for n in names:
            if n in KERNELS:
                raise RuntimeError(f"two kernels registered for {n}")
            KERNELS[n] = fn
        return fn
    return deco
