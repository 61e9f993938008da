"""A worked example of a vendor backend for stablehlo-ref's conformance suite.

Many compilers are driven as command-line tools: compile a StableHLO program, run it on
arrays, write the results. This backend wraps such a tool. Out of the box the tool is
stablehlo-ref's own `run` command (so the example runs anywhere); point it at yours with
the option, e.g. `--backend example-cli:"mytool run"` after installing this package, or
`--backend example_cli_backend:CommandLineBackend:"mytool run"` without installing it. The
tool is called as

    TOOL PROGRAM.mlir [--inputs INPUTS.npz] -o RESULTS.npz

with the arguments as `arg_0, arg_1, ...` and the results read back as `result_0, ...`.

What a backend must do (stablehlo_ref.conformance.Backend):
- `available()` -> (ok, reason): can it run at all here? (the tool exists and starts)
- `run(program, inputs, timeout)` -> list of numpy arrays, the results of `@main`;
  raise `BackendUnsupported` for what it does not implement (an op, an element type),
  `BackendError(message, stage)` for a failure (stage "compile", "run" or "timeout").
  Any other exception is reported as an error of that case, never fatal to the run.
- optionally `describe()` (a line about versions and device), `clone()` (another instance
  for `--jobs N`), `close()`.
"""
from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tempfile

import numpy as np

from stablehlo_ref.conformance import Backend, BackendError, BackendUnsupported

DEFAULT_TOOL = [sys.executable, "-m", "stablehlo_ref.cli", "run"]


def _last_line(text: str) -> str:
    lines = [l for l in text.strip().splitlines() if l.strip()]
    return lines[-1] if lines else ""


class CommandLineBackend(Backend):
    name = "example-cli"

    def __init__(self, tool: str | None = None):
        self.tool = shlex.split(tool) if tool else list(DEFAULT_TOOL)

    def describe(self) -> str:
        return f"{self.name}: {' '.join(os.path.basename(t) for t in self.tool)}"

    def available(self):
        try:
            r = subprocess.run(self.tool + ["--help"], capture_output=True, text=True, timeout=120)
        except (OSError, subprocess.TimeoutExpired) as e:
            return False, f"cannot start {self.tool[0]}: {e}"
        if r.returncode != 0:
            return False, f"{' '.join(self.tool)} --help exits {r.returncode}: {_last_line(r.stderr)}"
        return True, ""

    def clone(self):
        # each run() uses its own temporary folder and process: one instance can serve
        # several threads, but a separate one keeps the example obvious
        return CommandLineBackend(shlex.join(self.tool))

    def run(self, program, inputs, timeout=None):
        # .npz carries numpy's own types only: bf16, f8, i4 ... arrays would come back as
        # raw bytes, so this backend declares them unsupported instead of failing them
        for i, a in enumerate(inputs):
            if np.asarray(a).dtype.kind not in "biufc":
                raise BackendUnsupported(f"argument {i}: element type {a.dtype} cannot be passed to the tool")
        with tempfile.TemporaryDirectory(prefix="example-cli-") as d:
            prog = os.path.join(d, "program.mlir")
            with open(prog, "w", encoding="utf-8") as f:
                f.write(program)
            cmd = self.tool + [prog]
            if len(inputs):
                args = os.path.join(d, "inputs.npz")
                np.savez(args, **{f"arg_{i}": np.asarray(a) for i, a in enumerate(inputs)})
                cmd += ["--inputs", args]
            out = os.path.join(d, "results.npz")
            cmd += ["-o", out]
            try:
                r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
            except subprocess.TimeoutExpired:
                raise BackendError(f"no result in {timeout:g} s", "timeout") from None
            if r.returncode != 0:
                msg = _last_line(r.stderr) or f"exit code {r.returncode}"
                if "not implemented" in msg:
                    raise BackendUnsupported(msg)
                # the tool's own convention: parse and verification errors are compile errors
                stage = "compile" if any(w in msg for w in ("ParseError", "VerificationError", "parse", "invalid")) else "run"
                raise BackendError(msg, stage)
            with np.load(out, allow_pickle=False) as z:
                names = sorted(z.files, key=lambda k: int(k.rsplit("_", 1)[-1]))
                results = [z[k] for k in names]
        for i, a in enumerate(results):
            if a.dtype.kind == "V":
                raise BackendUnsupported(f"result {i}: element type not representable in .npz ({a.dtype})")
        return results
