"""Writing generated cases for backends outside Python, in a language-neutral layout
(documented in conformance/README.md, "Exported layout"):

    DIR/manifest.json
    DIR/<case>/program.mlir          StableHLO text, entry @main
    DIR/<case>/program.mlirbc        the portable artifact at the chosen target version
    DIR/<case>/input_<i>.npy         arguments of @main, in order
    DIR/<case>/expected_<i>.npy      expected results, in order
    DIR/<case>/infeed_<k>_<i>.npy    value i of the k-th host feed (infeed cases)

Arrays of types numpy has no dtype for (bf16, f8*, f6*, f4*, i2/i4/ui2/ui4) are stored as
their raw bits in an unsigned integer of the storage width; the manifest names each array's
element type."""
from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Sequence

import numpy as np

from stablehlo_ref.errors import StableHLOError, UsageError

FORMAT = "stablehlo-ref generated conformance suite"


def _stem(case_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", case_id.split("/", 1)[1] if "/" in case_id else case_id)


def _portable(a: np.ndarray) -> np.ndarray:
    if type(a.dtype).__module__.startswith("ml_dtypes") or a.dtype.name not in np.sctypeDict:
        return a.view(np.dtype(f"u{a.dtype.itemsize}"))
    return a


def _type_of(program_types, i):
    return program_types[i] if i < len(program_types) else ""


def _element_type_of(tensor_type: str) -> str:
    """`tensor<2x3xbf16>` -> `bf16`; `tensor<2x!quant.uniform<i8:f32, 0.5:-3>>` -> the
    quantized type (its values are the storage integers)."""
    from stablehlo_ref.text import parse
    t = parse(f"func.func private @t(%a: {tensor_type})", "<type>").function("t").attributes["function_type"].type.inputs[0]
    return str(t.element_type)


def export_generated(cases: Sequence, directory: str, target: str = "1.0.0") -> str:
    """Write `cases` under `directory` (see the module docstring); returns the manifest path.
    The portable artifact is written for StableHLO `target`; a case whose ops that version
    cannot express gets no artifact (`"artifact": null` and the reason)."""
    import stablehlo_ref
    from stablehlo_ref.text import parse
    out = Path(directory)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError(f"cannot create {directory}: {e.strerror}") from None
    manifest = {"format": FORMAT, "version": 1, "target_version": target, "cases": []}
    for c in cases:
        stem = _stem(c.id)
        d = out / stem
        d.mkdir(exist_ok=True)
        (d / "program.mlir").write_text(c.program, encoding="utf-8")
        entry = {"id": c.id, "dir": stem, "op": c.op, "element_type": c.element_type, "variant": c.variant,
                 "oracle": c.oracle, "provenance": c.provenance, "program": f"{stem}/program.mlir"}
        try:
            data = stablehlo_ref.serialize(parse(c.program, c.id), target=target)
            (d / "program.mlirbc").write_bytes(data)
            entry["artifact"] = f"{stem}/program.mlirbc"
        except StableHLOError as e:
            entry["artifact"] = None
            entry["artifact_error"] = str(e).splitlines()[0] if str(e) else type(e).__name__
        fn = parse(c.program, c.id).function("main")
        fts = fn.attributes["function_type"].type.inputs
        in_types = [str(t) for t in fts]
        in_ets = [t.element_type.name for t in fts]
        nproc = c.num_replicas * c.num_partitions
        entry["num_replicas"] = c.num_replicas
        entry["num_partitions"] = c.num_partitions
        n_in = len(in_types)
        n_out = len(c.expected) // nproc
        if len(c.inputs) != n_in * nproc or n_out * nproc != len(c.expected):
            raise UsageError(f"{c.id}: {len(c.inputs)} inputs / {len(c.expected)} outputs do not split "
                             f"evenly over {nproc} processes of {n_in} argument(s)")
        entry["inputs"] = []
        for i, a in enumerate(c.inputs):
            a = np.asarray(a)
            np.save(d / f"input_{i}.npy", _portable(a), allow_pickle=False)
            x = {"file": f"{stem}/input_{i}.npy", "type": _type_of(in_types, i % n_in),
                 "element_type": in_ets[i % n_in], "shape": list(a.shape)}
            if nproc > 1:
                x["process"] = list(divmod(i // n_in, c.num_partitions))
            entry["inputs"].append(x)
        entry["outputs"] = []
        for i, (a, et, r) in enumerate(zip(c.expected, c.element_types, c.rules)):
            a = np.asarray(a)
            np.save(d / f"expected_{i}.npy", _portable(a), allow_pickle=False)
            x = {"file": f"{stem}/expected_{i}.npy", "element_type": et, "shape": list(a.shape),
                 "tolerance": r.to_json()}
            if nproc > 1:
                x["process"] = list(divmod(i // n_out, c.num_partitions))
            entry["outputs"].append(x)
        if c.infeed:
            entry["infeed"] = []
            for k, f in enumerate(c.infeed):
                vals = []
                for i, (a, ty) in enumerate(zip(f.values, f.types)):
                    a = np.asarray(a)
                    np.save(d / f"infeed_{k}_{i}.npy", _portable(a), allow_pickle=False)
                    vals.append({"file": f"{stem}/infeed_{k}_{i}.npy", "type": ty,
                                 "element_type": _element_type_of(ty), "shape": list(a.shape)})
                entry["infeed"].append({"process": [int(x) for x in f.process], "values": vals})
        manifest["cases"].append(entry)
    path = out / "manifest.json"
    tmp = out / ".manifest.json.tmp"
    tmp.write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    os.replace(tmp, path)
    return str(path)


def load_generated_export(directory: str) -> list:
    """The cases of a folder written by `export_generated` (program text, arrays, rules)."""
    from ..cases import Case, Feed, Rule, process_labels
    from .values import type_info
    d = Path(directory)
    m = json.loads((d / "manifest.json").read_text(encoding="utf-8"))
    out = []
    for e in m["cases"]:
        ins = []
        for x in e["inputs"]:
            a = np.load(d / x["file"], allow_pickle=False)
            dt = type_info(x["element_type"]).dtype
            ins.append(a.view(dt) if a.dtype != dt and a.dtype.itemsize == dt.itemsize else a)
        exp, ets, rules = [], [], []
        for x in e["outputs"]:
            a = np.load(d / x["file"], allow_pickle=False)
            dt = type_info(x["element_type"]).dtype
            if a.dtype != dt and a.dtype.itemsize == dt.itemsize:
                a = a.view(dt)
            exp.append(a)
            ets.append(x["element_type"])
            t = x["tolerance"]
            rules.append(Rule(t["kind"], t.get("atol", 0.0), t.get("max_ulp", 0), t.get("check", ""), t.get("rtol", 0.0)))
        feeds = []
        for f in e.get("infeed", []):
            vals = []
            for x in f["values"]:
                a = np.load(d / x["file"], allow_pickle=False)
                dt = _storage_dtype(x["element_type"])
                vals.append(a.view(dt) if dt is not None and a.dtype != dt and a.dtype.itemsize == dt.itemsize else a)
            feeds.append(Feed(vals, [x["type"] for x in f["values"]], tuple(f.get("process", (0, 0)))))
        nr, npart = int(e.get("num_replicas", 1)), int(e.get("num_partitions", 1))
        out.append(Case(e["id"], (d / e["program"]).read_text(encoding="utf-8"), ins, exp, ets, rules,
                        process_labels(len(exp) // (nr * npart), nr, npart), ["oracle"] * len(exp), (e["op"],), e["op"],
                        e["element_type"], e["variant"], e["oracle"], e["provenance"],
                        num_replicas=nr, num_partitions=npart, infeed=feeds))
    return out


def _storage_dtype(element_type: str):
    """The numpy dtype an exported array of `element_type` is read as (quantized: its storage)."""
    from stablehlo_ref.ir.types import ELEMENT_TYPES
    et = ELEMENT_TYPES.get(element_type)
    if et is not None:
        return et.dtype
    from stablehlo_ref.text import parse
    try:
        t = parse(f"func.func private @t(%a: tensor<{element_type}>)", "<type>").function("t").attributes["function_type"].type.inputs[0]
        return t.element_type.storage_type.dtype
    except Exception:       # noqa: BLE001 - an unknown name: the array is read as stored
        return None
