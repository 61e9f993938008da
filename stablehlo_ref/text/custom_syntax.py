"""The ops whose syntax is written by hand rather than by a declarative format: one table,
`OP_SYNTAX`, of `Syntax(parse, print)` pairs that the parser and the printer both read. The
functions themselves stand side by side in syntax_builtin.py (builtin, func, arith, tensor,
scf), syntax_stablehlo.py (StableHLO, CHLO, interpreter dialect) and syntax_sdy.py (Shardy).

parse(p, name) -> Operation reads the op after its name; print(pr, op, indent) -> list of
lines (None: not printable in this form, the printer writes the generic form)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from . import syntax_builtin as B
from . import syntax_stablehlo as S
from . import syntax_sdy as Y


@dataclass(frozen=True)
class Syntax:
    """One op's hand-written syntax: how it is read and how it is written."""
    parse: Callable
    print: Callable


OP_SYNTAX = {
    "builtin.module": Syntax(B.parse_module, B.print_module),
    "func.func": Syntax(B.parse_func, B.print_func),
    "func.return": Syntax(B.parse_return, B.print_return),
    "func.call": Syntax(B.parse_call, B.print_call),
    "arith.constant": Syntax(B.parse_arith_constant, B.print_arith_constant),
    "tensor.cast": Syntax(B.parse_tensor_cast, B.print_tensor_cast),
    "tensor.insert": Syntax(B.parse_tensor_insert, B.print_tensor_insert),
    "tensor.extract": Syntax(B.parse_tensor_extract, B.print_tensor_extract),
    "scf.for": Syntax(B.parse_scf_for, B.print_scf_for),
    "scf.yield": Syntax(B.parse_return, B.print_return),
    "stablehlo.constant": Syntax(S.parse_constant, S.print_constant),
    "chlo.constant": Syntax(S.parse_constant, S.print_constant),
    "stablehlo.while": Syntax(S.parse_while, S.print_while),
    "stablehlo.reduce": Syntax(S.parse_reduce, S.print_reduce),
    "chlo.scan": Syntax(S.parse_scan, S.print_scan),
    "interpreter.probe": Syntax(S.parse_probe, S.print_probe),
    "interpreter.print": Syntax(S.parse_print, S.print_unary_typed),
}
OP_SYNTAX.update({n: Syntax(*fns) for n, fns in Y.OPS.items()})
OP_SYNTAX.update({f"arith.{n}": Syntax(B.parse_arith_binary, B.print_arith_binary) for n in B.ARITH_BINARY})
