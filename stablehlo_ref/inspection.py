"""`stablehlo-ref inspect FILE`: what a program file is and what it holds, without running it.

    inspect_bytes(data, module) -> dict     (the JSON of `inspect --json`)
    format_inspection(info) -> str          (the text form)

Reported: the kind of file (text, portable artifact, jax.export payload); for an artifact its
StableHLO version, bytecode version and producer; for a jax.export payload its function
name, platforms, serialization and calling-convention versions; the entry function's
signature with argument names (jax.arg_info, location names, text names) and shardings;
every function; ops used with counts; dialects; custom-call targets; the module's attributes
named `jax.*`/`mhlo.*`; and the oldest StableHLO version whose portable artifact can carry
the module (the latest `since` of its ops, then checked by writing it)."""
from __future__ import annotations

from collections import Counter
from typing import Optional


def _str_attr(d, key) -> Optional[str]:
    for k, v in getattr(d, "entries", ()) or ():
        if k == key:
            val = getattr(v, "value", None)
            return val if isinstance(val, str) else str(v)
    return None


def _signature(func) -> dict:
    from .runinputs import argument_names
    ft = func.attributes["function_type"].type
    arg_attrs = list(getattr(func.attributes.get("arg_attrs"), "elements", ()) or ())
    res_attrs = list(getattr(func.attributes.get("res_attrs"), "elements", ()) or ())
    names = argument_names(func)
    args = []
    for i, t in enumerate(ft.inputs):
        d = arg_attrs[i] if i < len(arg_attrs) else None
        args.append({"name": names[i][0], "type": str(t),
                     "sharding": _str_attr(d, "mhlo.sharding") or _str_attr(d, "sdy.sharding")})
    results = []
    for i, t in enumerate(ft.results):
        d = res_attrs[i] if i < len(res_attrs) else None
        results.append({"name": _str_attr(d, "jax.result_info"), "type": str(t),
                        "sharding": _str_attr(d, "mhlo.sharding") or _str_attr(d, "sdy.sharding")})
    vis = func.attributes.get("sym_visibility")
    return {"name": func.attributes["sym_name"].value if "sym_name" in func.attributes else None,
            "visibility": getattr(vis, "value", "public") if vis is not None else "public",
            "arguments": args, "results": results}


def _minimum_version(module, op_names) -> Optional[str]:
    from . import spec
    from .errors import StableHLOError
    from .serialization import serialize
    lo = spec.parse_version(spec.minimum_version())
    for name in op_names:
        if spec.has_op(name):
            lo = max(lo, spec.parse_version(spec.op(name).since))
    for v in spec.versions():
        ver = getattr(v, "version", None) or getattr(v, "name", None) or str(v)
        try:
            pv = spec.parse_version(ver)
        except Exception:
            continue
        if pv < lo:
            continue
        try:
            serialize(module, ver, strip_debuginfo=True)
            return ver
        except StableHLOError:
            continue
    return None


def _jax_details(data: bytes) -> dict:
    """Argument and result shapes (symbolic dimensions as jax names them), device count and
    jax version from a jax.export payload's FlatBuffer (serialization.fbs slots: 3 in_avals,
    5 out_avals, 6/18 nr_devices, 19 unique_avals, 22/23 in/out_avals_idxs, 26 jax_version)."""
    import struct
    from .errors import SerializationError
    from .serialization.jax_export import _Table
    buf = memoryview(data)
    try:
        root = _Table(buf, struct.unpack_from("<I", buf, 0)[0])

        def tables(t, slot):
            v = t.vector(slot)
            if v is None:
                return []
            start, n = v
            t._check(start, 4 * n)
            return [_Table(buf, start + 4 * i + t._u32(start + 4 * i)) for i in range(n)]

        def u32s(t, slot):
            v = t.vector(slot)
            if v is None:
                return []
            start, n = v
            t._check(start, 4 * n)
            return [t._u32(start + 4 * i) for i in range(n)]

        def avals(direct, idx_slot):
            got = tables(root, direct)
            if not got:
                unique = tables(root, 19)
                got = [unique[i] for i in u32s(root, idx_slot) if i < len(unique)]
            return [a.strings(1) for a in got]
        ins, outs = avals(3, 22), avals(5, 23)
        nr = root._u32(root.field(18)) if root.field(18) is not None else root.u16(6)
        symbolic = sorted({d for shape in ins + outs for d in shape if not d.lstrip("-").isdigit()})
        return {"in_shapes": ins, "out_shapes": outs, "symbolic_dims": symbolic, "nr_devices": nr,
                "jax_version": root.string(26)}
    except (SerializationError, struct.error, IndexError):
        return {}


def inspect_bytes(data: bytes, module) -> dict:
    from .serialization.jax_export import is_jax_exported, read_jax_exported
    info: dict = {}
    artifact = None
    if data[:4] == b"ML\xefR":
        info["format"] = "portable artifact"
        artifact = data
    elif is_jax_exported(data):
        info["format"] = "jax.export payload"
        j = read_jax_exported(data)
        artifact = bytes(j["module"])
        info["jax_export"] = {"function_name": j["function_name"], "platforms": list(j["platforms"] or []),
                              "serialization_version": j["serialization_version"],
                              "calling_convention_version": j["calling_convention_version"],
                              **_jax_details(data)}
    else:
        info["format"] = "text"
    if artifact is not None:
        from .serialization import artifact_version, read_vhlo
        _root, bc_version, producer = read_vhlo(artifact)
        info["artifact"] = {"stablehlo_version": artifact_version(artifact), "bytecode_version": bc_version,
                            "producer": producer}
    fns = module.functions
    entry = "main" if "main" in fns else next(iter(fns), None)
    info["entry"] = _signature(fns[entry]) if entry is not None and entry in fns else None
    info["functions"] = list(fns)
    ops = Counter()
    targets = Counter()
    dynamic = False
    for op in module.walk():
        if op.name == "builtin.module":
            continue
        ops[op.name] += 1
        if op.name == "stablehlo.custom_call":
            t = op.attributes.get("call_target_name")
            targets[getattr(t, "value", str(t))] += 1
        for r in op.results:
            if None in (getattr(r.type, "shape", ()) or ()):
                dynamic = True
    info["ops"] = dict(sorted(ops.items()))
    info["dialects"] = sorted({n.split(".", 1)[0] for n in ops})
    info["custom_call_targets"] = dict(sorted(targets.items()))
    info["dynamic_shapes"] = dynamic
    mod_attrs = {}
    for k, v in module.op.attributes.items():
        if k.startswith(("jax.", "mhlo.", "sdy.")):
            mod_attrs[k] = getattr(v, "value", None) if isinstance(getattr(v, "value", None), (str, int, bool)) else str(v)
    info["module_attributes"] = mod_attrs
    info["minimum_version"] = _minimum_version(module, ops)
    return info


def format_inspection(info: dict) -> str:
    out = [f"format: {info['format']}"]
    a = info.get("artifact")
    if a:
        out.append(f"artifact: StableHLO {a['stablehlo_version']}, bytecode version {a['bytecode_version']}, "
                   f"producer {a['producer']}")
    j = info.get("jax_export")
    if j:
        out.append(f"jax.export: function {j['function_name']}, platforms {', '.join(j['platforms']) or '-'}, "
                   f"serialization version {j['serialization_version']}, "
                   f"calling convention version {j['calling_convention_version']}")
        if j.get("nr_devices") is not None:
            out.append(f"  devices: {j['nr_devices']}" + (f", jax {j['jax_version']}" if j.get("jax_version") else ""))
        if j.get("in_shapes") is not None:
            out.append("  argument shapes: " + ", ".join("(" + ", ".join(s) + ")" for s in j["in_shapes"]))
            out.append("  result shapes: " + ", ".join("(" + ", ".join(s) + ")" for s in j["out_shapes"]))
        if j.get("symbolic_dims"):
            out.append(f"  symbolic dimensions: {', '.join(j['symbolic_dims'])}")
    e = info.get("entry")
    if e:
        out.append(f"entry: @{e['name']} ({e['visibility']})")
        for i, x in enumerate(e["arguments"]):
            sh = f", sharding {x['sharding']}" if x["sharding"] else ""
            out.append(f"  argument #{i} {x['name']}: {x['type']}{sh}")
        for i, x in enumerate(e["results"]):
            nm = f" {x['name']}" if x["name"] else ""
            sh = f", sharding {x['sharding']}" if x["sharding"] else ""
            out.append(f"  result #{i}{nm}: {x['type']}{sh}")
    out.append(f"functions: {', '.join('@' + f for f in info['functions'])}")
    out.append(f"dialects: {', '.join(info['dialects'])}")
    out.append(f"ops ({sum(info['ops'].values())}):")
    for name, n in sorted(info["ops"].items(), key=lambda kv: (-kv[1], kv[0])):
        out.append(f"  {n:6d}  {name}")
    if info["custom_call_targets"]:
        out.append("custom-call targets: " + ", ".join(f"{k} ({v})" for k, v in info["custom_call_targets"].items()))
    if info["dynamic_shapes"]:
        out.append("dynamic shapes: yes")
    for k, v in info["module_attributes"].items():
        out.append(f"module attribute {k}: {v}")
    mv = info["minimum_version"]
    out.append(f"minimum StableHLO version: {mv if mv else 'none (no portable artifact can carry it)'}")
    return "\n".join(out) + "\n"
