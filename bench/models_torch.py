"""PyTorch programs exported through torchax, for `bench_models.py --set torch`: the programs
of tests/torchax_programs.py (torch.nn layers, functional ops, training-loss gradients) as
jax functions of their arrays. Needs torch and torchax (`pip install -e .[torch]`)."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import torchax_programs as T  # noqa: E402


def _program(name):
    def make():
        import jax
        from jax import export
        fn, args = T.build(name)
        leaves, td = jax.tree_util.tree_flatten(args)

        def flat(*ls):
            return fn(*jax.tree_util.tree_unflatten(td, ls))
        # (the arrays the program reads: jax drops the others, such as a BatchNorm's step
        # count, from the module's arguments)
        kept = sorted(export.export(jax.jit(flat))(*leaves).module_kept_var_idx)

        def f(*ks):
            ls = list(leaves)
            for i, k in zip(kept, ks):
                ls[i] = k
            return flat(*ls)
        return "torch_" + name, f, [leaves[i] for i in kept]
    make.__name__ = "torch_" + name
    return make


TORCH = {"torch_" + n: _program(n) for n in T.NAMES}
NEEDS = {k: ("torch", "torchax") for k in TORCH}
