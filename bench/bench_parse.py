"""Parser speed: our text parser against MLIR's C++ parser (`jaxlib.mlir.ir.Module.parse`).

Two generated modules: one with many small ops (a chain of elementwise/dot/reduce layers, 10k+
ops) and one dominated by large hex `dense<"0x...">` constants (~100 MB of hex text by
default). Prints seconds for each parser and the ratio ours / C++ (lower is better). On the
generic form of the many-ops module it also times a lark LALR(1) parser with a contextual
lexer (bench/lark_generic.py, parse tree only): the baseline the hand-written parser was
chosen against. Times are the best of
`--repeat` runs in process CPU time (`time.process_time`), so a loaded machine skews them less.

    python bench/bench_parse.py [--ops 12000] [--const-mb 100] [--repeat 3]
    python bench/bench_parse.py --ours-from ../main   # time another checkout's parser
    python bench/bench_parse.py --models [--only mlp,linalg] [--repeat 20] [--ours-from ../main]

`--models` times the jax-lowered programs of bench/models.py instead (needs jax; flax, optax
and equinox where installed): each program is lowered once, then parsed once (`first`), then
best of `--repeat` parses by each parser, per program ours/MLIR and their geometric mean.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

if "--ours-from" in sys.argv:
    # before anything imports stablehlo_ref: time the parser of another checkout (e.g. main)
    sys.path.insert(0, str(Path(sys.argv[sys.argv.index("--ours-from") + 1]).resolve()))


def many_ops_module(n_ops: int) -> str:
    lines = ["module {", "  func.func @main(%arg0: tensor<8x16xf32>, %w: tensor<16x16xf32>) -> tensor<8x16xf32> {"]
    prev = "%arg0"
    i = 0
    while i < n_ops:
        lines.append(f"    %d{i} = stablehlo.dot_general {prev}, %w, contracting_dims = [1] x [0] : "
                     "(tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>")
        lines.append(f"    %a{i} = stablehlo.add %d{i}, {prev} : tensor<8x16xf32>")
        lines.append(f"    %t{i} = stablehlo.tanh %a{i} : tensor<8x16xf32>")
        lines.append(f'    %c{i} = stablehlo.constant dense<1.500000e+00> : tensor<8x16xf32> loc("model.py":{i}:3)')
        lines.append(f"    %m{i} = stablehlo.multiply %t{i}, %c{i} : tensor<8x16xf32>")
        prev = f"%m{i}"
        i += 5
    lines.append(f"    return {prev} : tensor<8x16xf32>")
    lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def big_constants_module(total_mb: float) -> str:
    n = 1024 * 1024                         # f32 elements per constant: 4 MB -> 8 MB of hex
    count = max(1, int(total_mb * 1024 * 1024 // (8 * n)))
    payload = "0x" + (b"\x00\x00\x80\x3f" * n).hex().upper()
    lines = ["module {", "  func.func @main() -> tensor<1048576xf32> {"]
    for i in range(count):
        lines.append(f'    %c{i} = stablehlo.constant dense<"{payload}"> : tensor<1048576xf32>')
    acc = "%c0"
    for i in range(1, count):
        lines.append(f"    %s{i} = stablehlo.add {acc}, %c{i} : tensor<1048576xf32>")
        acc = f"%s{i}"
    lines.append(f"    return {acc} : tensor<1048576xf32>")
    lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def time_ours(text: str, repeat: int) -> float:
    from stablehlo_ref.text import parse
    parse(many_ops_module(5))            # load the spec once, outside the timing
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        parse(text, "<bench>")
        best = min(best, time.process_time() - t0)
    return best


def time_mlir(text: str, repeat: int):
    try:
        from jax._src.interpreters import mlir as jmlir
        from jaxlib.mlir import ir
    except Exception:                       # jax not installed: report ours only
        return None
    ctx = jmlir.make_ir_context()
    best = float("inf")
    for _ in range(repeat):
        with ctx:
            t0 = time.process_time()
            ir.Module.parse(text)
            best = min(best, time.process_time() - t0)
    return best


def time_lark(text: str, repeat: int):
    """lark LALR(1) + contextual lexer on the generic form, parse tree only (bench/lark_generic.py)."""
    try:
        import os
        import sys
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from lark_generic import make_parser
        parser = make_parser()
    except ImportError:
        return None
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        parser.parse(text)
        best = min(best, time.process_time() - t0)
    return best


def generic_form(text: str) -> str:
    from stablehlo_ref import parse, print_module
    return print_module(parse(text), generic=True)


def model_texts(only=None):
    """(key, name, text) of each bench/models.py program jax lowers (a program whose library
    is missing is left out with a message)."""
    import os
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import models
    out = []
    for key, make in models.PROGRAMS.items():
        if only and key not in only:
            continue
        try:
            name, fn, fargs = make()
            out.append((key, name, models.lower(fn, fargs)))
        except ImportError as e:
            print(f"{key}: skipped ({e})")
    return out


def run_models(args) -> None:
    try:
        import jax  # noqa: F401
    except ImportError:
        print("--models needs jax (pip install -e .[interop]): skipped")
        return
    import math
    only = set(args.only.split(",")) if args.only else None
    progs = model_texts(only)
    repeat = max(args.repeat, 1)
    from stablehlo_ref.text import parse
    parse(many_ops_module(5))            # load the spec once, outside the timing
    # `first`: the program's first parse in this process (the types it is the first to use are
    # not in the parser's shared type cache yet, so more of it takes the general parser)
    print(f"{'program':<26} {'ops':>5} {'text KB':>8} {'first ms':>8} {'ours ms':>8} {'mlir ms':>8} {'ours/mlir':>9}")
    ratios = []
    for key, name, text in progs:
        t0 = time.process_time()
        parse(text, "<bench>")
        first = time.process_time() - t0
        ours = time_ours(text, repeat)
        theirs = time_mlir(text, repeat)
        cols = [f"{name:<26}", f"{text.count(' = '):5d}", f"{len(text) / 1e3:8.1f}", f"{first * 1e3:8.2f}",
                f"{ours * 1e3:8.2f}"]
        if theirs:
            ratios.append(ours / theirs)
            cols += [f"{theirs * 1e3:8.2f}", f"{ours / theirs:8.2f}x"]
        else:
            cols += [f"{'n/a':>8}", f"{'n/a':>9}"]
        print(" ".join(cols))
    if ratios:
        geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        print(f"{'geometric mean':<26} {'':>5} {'':>8} {'':>8} {'':>8} {'':>8} {geo:8.2f}x")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ops", type=int, default=12000)
    ap.add_argument("--const-mb", type=float, default=100.0)
    ap.add_argument("--repeat", type=int, default=None, help="best of this many parses (default 3; --models: 20)")
    ap.add_argument("--ours-from", default=None, help="import stablehlo_ref from this checkout")
    ap.add_argument("--models", action="store_true",
                    help="time bench/models.py's jax-lowered programs instead (needs jax)")
    ap.add_argument("--only", default=None, help="with --models: comma-separated program keys")
    args = ap.parse_args(argv)
    if args.models:
        args.repeat = 20 if args.repeat is None else args.repeat
        run_models(args)
        return
    args.repeat = 3 if args.repeat is None else args.repeat
    ops = many_ops_module(args.ops)
    cases = [(f"{args.ops} ops", ops, False),
             (f"{args.ops} ops, generic form", generic_form(ops), True),
             (f"~{args.const_mb:g} MB hex constants", big_constants_module(args.const_mb), False)]
    print(f"{'module':<32} {'text MB':>8} {'ours s':>8} {'mlir s':>8} {'ours/mlir':>9} "
          f"{'lark s':>8} {'lark/ours':>9}")
    for name, text, with_lark in cases:
        ours = time_ours(text, args.repeat)
        theirs = time_mlir(text, args.repeat)
        lark_s = time_lark(text, 1) if with_lark else None
        mb = len(text) / 1e6
        cols = [f"{name:<32}", f"{mb:8.1f}", f"{ours:8.3f}"]
        cols += [f"{'n/a':>8}", f"{'n/a':>9}"] if theirs is None else [f"{theirs:8.3f}", f"{ours / theirs:8.1f}x"]
        cols += [f"{'-':>8}", f"{'-':>9}"] if lark_s is None else [f"{lark_s:8.3f}", f"{lark_s / ours:8.1f}x"]
        print(" ".join(cols))


if __name__ == "__main__":
    main()
