"""The dimension numbers of a convolution, `[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]`: parsed into
the fields of `#stablehlo.conv` and printed back from them, side by side. The custom
`ConvolutionDimensions` directive and the `#stablehlo.conv<...>` attribute both use them."""
from __future__ import annotations

import re

_LABEL = re.compile(r"\d+|[a-z]")


def parse_conv_dims(p):
    """`[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]` -> conv dimension-number fields."""
    sc = p.sc

    def dims(letters):
        sc.expect("[")
        items = []
        if not sc.accept("]"):
            while True:
                sc.ws()
                m = _LABEL.match(sc.s, sc.pos)
                if not m:
                    raise sc.error("expected dimension label")
                sc.pos = m.end()
                items.append(m.group(0))
                if not sc.accept(","):
                    break
            sc.expect("]")
        named = {}
        spatial = {}
        for i, it in enumerate(items):
            if it.isdigit():
                if int(it) in spatial:
                    raise sc.error(f"spatial dimension {it} appears twice")
                spatial[int(it)] = i
            elif it in letters:
                if it in named:
                    raise sc.error(f"dimension '{it}' appears twice")
                named[it] = i
            else:
                raise sc.error(f"unexpected dimension label '{it}' (expected one of {', '.join(letters)} or a number)")
        for l in letters:
            if l not in named:
                raise sc.error(f"missing dimension label '{l}'")
        if sorted(spatial) != list(range(len(spatial))):
            raise sc.error("spatial dimensions must be numbered 0..N-1")
        return named, tuple(spatial[k] for k in range(len(spatial)))
    i_named, i_sp = dims("bf")
    sc.expect("x")
    k_named, k_sp = dims("io")
    sc.expect("->")
    o_named, o_sp = dims("bf")
    return (("input_batch_dimension", i_named["b"]), ("input_feature_dimension", i_named["f"]),
            ("input_spatial_dimensions", i_sp), ("kernel_input_feature_dimension", k_named["i"]),
            ("kernel_output_feature_dimension", k_named["o"]), ("kernel_spatial_dimensions", k_sp),
            ("output_batch_dimension", o_named["b"]), ("output_feature_dimension", o_named["f"]),
            ("output_spatial_dimensions", o_sp))


def print_conv_dims(fields) -> str:
    """The text of conv dimension-number fields (KeyError/IndexError where they do not fit)."""
    f = dict(fields)

    def dims(batch_key, feat_key, sp_key, letters):
        n = len(f[sp_key]) + 2
        positions = [f[batch_key], f[feat_key], *f[sp_key]]
        # the compact form holds only a permutation of 0..n-1 (anything else prints raw)
        if sorted(p if type(p) is int else -1 for p in positions) != list(range(n)):
            raise IndexError(f"{sp_key} and the other dimensions are not a permutation")
        labels = [""] * n
        labels[f[batch_key]] = letters[0]
        labels[f[feat_key]] = letters[1]
        for i, d in enumerate(f[sp_key]):
            labels[d] = str(i)
        return "[" + ", ".join(labels) + "]"
    return (dims("input_batch_dimension", "input_feature_dimension", "input_spatial_dimensions", "bf") + "x" +
            dims("kernel_input_feature_dimension", "kernel_output_feature_dimension", "kernel_spatial_dimensions", "io") + "->" +
            dims("output_batch_dimension", "output_feature_dimension", "output_spatial_dimensions", "bf"))
