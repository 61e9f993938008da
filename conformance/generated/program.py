"""StableHLO text of a generated case: one `func.func @main` in MLIR's generic op form, which
every StableHLO parser (ours, upstream's, XLA's, IREE's) reads."""
from __future__ import annotations

from typing import List, Sequence, Tuple

from .values import mlir_type


class ProgramBuilder:
    def __init__(self, arg_types: Sequence[str]):
        self.arg_types = list(arg_types)
        self.lines: List[str] = []
        self.n = 0

    def arg(self, i: int) -> str:
        return f"%arg{i}"

    def op(self, name: str, operands: Sequence[Tuple[str, str]], result_types: Sequence[str],
           attrs: str = "", region: str = "") -> List[str]:
        res = [f"%{self.n + i}" for i in range(len(result_types))] if len(result_types) <= 1 else None
        if len(result_types) > 1:
            head = f"%{self.n}:{len(result_types)}"
            res = [f"%{self.n}#{i}" for i in range(len(result_types))]
        elif result_types:
            head = f"%{self.n}"
        else:
            head = ""
        self.n += 1
        ops = ", ".join(v for v, _ in operands)
        tys = ", ".join(t for _, t in operands)
        outs = ", ".join(result_types)
        outs = f"({outs})" if len(result_types) != 1 else outs
        a = f" {{{attrs}}}" if attrs else ""
        r = f" ({region})" if region else ""
        lhs = f"{head} = " if head else ""
        self.lines.append(f'  {lhs}"{name}"({ops}){r}{a} : ({tys}) -> {outs}')
        return res or []

    def text(self, results: Sequence[Tuple[str, str]]) -> str:
        args = ", ".join(f"%arg{i}: {t}" for i, t in enumerate(self.arg_types))
        rtys = ", ".join(t for _, t in results)
        body = "\n".join(self.lines)
        vals = ", ".join(v for v, _ in results)
        return (f"func.func @main({args}) -> ({rtys}) {{\n{body}\n"
                f"  \"func.return\"({vals}) : ({rtys}) -> ()\n}}\n")


def single_op_program(name: str, operand_types: Sequence[str], result_types: Sequence[str],
                      attrs: str = "", region: str = "") -> str:
    b = ProgramBuilder(operand_types)
    res = b.op(name, [(b.arg(i), t) for i, t in enumerate(operand_types)], result_types, attrs, region)
    return b.text(list(zip(res, result_types)))


def tensor(shape, et: str) -> str:
    return mlir_type(shape, et)
