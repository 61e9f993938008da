"""Mutators for fuzzing: structure-aware edits of MLIR text and byte-level edits of portable
artifacts, both driven by a `random.Random` so that a campaign is reproducible from its seed."""
from __future__ import annotations

import random
import re
from typing import List, Sequence

# Tokens that tend to reach corners of the parser: brackets, sigils, numbers at and past the
# edges of what int()/float() take, element types, attribute and type syntax.
TEXT_TOKENS = [
    "(", ")", "{", "}", "<", ">", "[", "]", ",", ":", "=", "%0", "%arg0", "tensor<", "x", "?",
    '"', "0x", "#", "!", "^bb0", "loc(", "-", "->", "\n", "// ", "{-#", "#-}", "@", "\\",
    "1e999", "-1e999", "1e3", "0.5", "1.0e+10", "nan", "inf", "0x7FC00000", "0xFFFFFFFFFFFFFFFFFF",
    "99999999999999999999", "-9223372036854775809", "1" * 5000, "0x" + "F" * 5000,
    "i1", "i4", "i64", "ui8", "f32", "bf16", "f8E4M3FN", "complex<f32>", "index", "none",
    "dense<", "dense<[", "dense<(1.0, 2.0)>", "dense<\"0x00\">", "dense_resource<blob>",
    "array<i64: ", "array<i64>", "true", "false", "unit", "#stablehlo.", "!quant.uniform<",
    "!stablehlo.token", "tuple<", "tensor<*xf32>", "tensor<?x3xf32>", "tensor<100000000000xf32>",
    "tensor<1000000000000000xf32>", "#stablehlo<comparison_direction EQ>",
    "#stablehlo<fft_type FFT>", "#stablehlo<rng_distribution UNIFORM>",
    "#stablehlo<rng_algorithm DEFAULT>", "#stablehlo.gather<", "#stablehlo.scatter<",
    "#stablehlo.conv<", "#stablehlo.dot<", "#loc", "loc(unknown)", "loc(\"f\":1:2)",
    "loc(fused[", "loc(callsite(", "attributes", "{mhlo.sharding = \"\"}", " : i64", " : i32",
    " : f32", "stablehlo.return", "func.return", "applies", "across", "dimensions = [",
]

_NUM = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
_TYPE = re.compile(r"\b(?:i1|i8|i16|i32|i64|ui8|ui32|ui64|f16|bf16|f32|f64|complex<f32>)\b")
_ELEMS = ["i1", "i4", "i8", "i16", "i32", "i64", "ui8", "ui32", "ui64", "f16", "bf16", "f32",
          "f64", "f8E5M2", "complex<f32>", "complex<f64>", "index"]
_ODD_NUMBERS = ["0", "-1", "1", "2", "3", "1e3", "1.5", "-0.0", "65536", "2147483648",
                "9223372036854775808", "18446744073709551616", "0x10", "1e400", "7" * 400,
                "100000000000", "1000000000000000"]


def mutate_text(rng: random.Random, seed: str, corpus: Sequence[str] = ()) -> str:
    """1..6 random edits of `seed`: token insertion, deletion, duplication, a number or element
    type replaced, a splice from another corpus program, a line swap, or deep bracket nesting."""
    s = seed
    for _ in range(rng.randint(1, 6)):
        n = len(s)
        i = rng.randint(0, n)
        k = rng.randrange(10)
        if k == 0:
            s = s[:i] + rng.choice(TEXT_TOKENS) + s[i:]
        elif k == 1:
            s = s[:i] + s[i + rng.randint(1, 24):]
        elif k == 2:
            j = rng.randint(0, n)
            s = s[:i] + s[j:j + rng.randint(1, 40)] + s[i:]
        elif k in (3, 4):
            nums = list(_NUM.finditer(s))
            if nums:
                m = rng.choice(nums)
                s = s[:m.start()] + rng.choice(_ODD_NUMBERS) + s[m.end():]
        elif k == 5:
            types = list(_TYPE.finditer(s))
            if types:
                m = rng.choice(types)
                s = s[:m.start()] + rng.choice(_ELEMS) + s[m.end():]
        elif k == 6 and corpus:
            other = rng.choice(corpus)
            j = rng.randint(0, len(other))
            s = s[:i] + other[j:j + rng.randint(1, 200)] + s[i:]
        elif k == 7:
            lines = s.split("\n")
            if len(lines) > 2:
                a, b = rng.randrange(len(lines)), rng.randrange(len(lines))
                lines[a], lines[b] = lines[b], lines[a]
                s = "\n".join(lines)
        elif k == 8:
            o, c = rng.choice([("(", ")"), ("[", "]"), ("<", ">"), ("{", "}")])
            depth = rng.choice([10, 100, 2000])
            s = s[:i] + o * depth + (c * depth if rng.random() < 0.5 else "") + s[i:]
        else:
            # an attribute value replaced by a value of another kind
            m = list(re.finditer(r"= ([^,}>\n]+)", s))
            if m:
                mm = rng.choice(m)
                s = s[:mm.start(1)] + rng.choice(
                    ["1e3 : i64", "\"s\"", "[1, 2]", "array<i64: 1>", "true", "unit", "@f",
                     "dense<1> : tensor<i64>", "#stablehlo<fft_type FFT>", "1.0 : f32",
                     "-1 : i64", "{}", "i32", "loc(unknown)"]) + s[mm.end(1):]
    return s


def mutate_bytes(rng: random.Random, seed: bytes, corpus: Sequence[bytes] = ()) -> bytes:
    """1..4 random edits of `seed`: bit flips, random or boundary bytes, a varint replaced by a
    huge one, deletion, duplication, truncation, or a splice from another artifact."""
    b = bytearray(seed)
    for _ in range(rng.randint(1, 4)):
        n = len(b)
        if n == 0:
            b += bytes(rng.randrange(256) for _ in range(8))
            continue
        i = rng.randrange(n)
        k = rng.randrange(9)
        if k == 0:
            b[i] ^= 1 << rng.randrange(8)
        elif k == 1:
            b[i] = rng.choice([0, 1, 0x7F, 0x80, 0xFE, 0xFF, rng.randrange(256)])
        elif k == 2:
            # a large prefix varint (MLIR bytecode: low bits of the first byte say the length)
            b[i:i + 1] = rng.choice([b"\x00" + b"\xff" * 8, b"\xfe\xff\xff\xff\xff\xff\xff\xff",
                                     b"\x80\xff\xff\xff\xff\xff\xff\x7f", b"\x02\x00"])
        elif k == 3:
            del b[i:i + rng.randint(1, 16)]
        elif k == 4:
            j = rng.randrange(n)
            b[i:i] = b[j:j + rng.randint(1, 32)]
        elif k == 5:
            del b[rng.randint(8, max(8, n)):]
        elif k == 6 and corpus:
            other = rng.choice(corpus)
            if other:
                j = rng.randrange(len(other))
                b[i:i + rng.randint(0, 32)] = other[j:j + rng.randint(1, 64)]
        elif k == 7:
            b[i] = (b[i] + rng.choice([-2, -1, 1, 2])) & 0xFF
        else:
            for _ in range(rng.randint(2, 8)):
                b[rng.randrange(len(b))] = rng.randrange(256)
    return bytes(b)


def split_chunks(text: str) -> List[str]:
    """Upstream test files hold several programs separated by `// -----` lines."""
    return [c for c in re.split(r"^// -----.*$", text, flags=re.M) if c.strip()]
