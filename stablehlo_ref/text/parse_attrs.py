"""Types, attributes and locations of MLIR text, as a mixin of the parser (`Parser` in
parser.py): builtin types and quantized element types, builtin attributes (dense literals,
symbols, dictionaries), the `#stablehlo.*`/`#chlo.*` struct and enum attributes whose fields
the spec declares, and locations (`#loc` aliases resolved after the module)."""
from __future__ import annotations

import math
import re
from typing import List

import numpy as np

from ..errors import ParseError
from ..ir.attributes import (AffineMapAttr, ArrayAttr, Attribute, BoolAttr, CallSiteLoc,
                             DenseArrayAttr, DenseElementsAttr, DenseResourceAttr, DictAttr,
                             ComplexAttr, EnumAttr, FileLineColLoc, FloatAttr, FusedLoc, IntegerAttr, Location,
                             NameLoc, OpaqueAttr, STRUCT_FIELDS, StringAttr, StructAttr, SymbolRefAttr,
                             TypeAttr, UNKNOWN_LOC, UnitAttr, UnknownLoc, dot_algorithm_problems)
from ..ir.wellformed import enum_cases, struct_field_kind as _struct_field_kind, struct_problem
from ..deep import check_depth
from ..limits import check_tensor
from ..ir.types import (ELEMENT_TYPES, ElementType, FunctionType, NoneType, OpaqueType,
                        QuantizedType, TensorType, TokenType, TupleType, Type, UnrankedTensorType)
from . import dense
from . import syntax_sdy
from .conv_dims import parse_conv_dims
from .lexer import BANG_ID, HASH_ID, NUMBER

_DIMS = re.compile(r"((?:(?:\d+|\?)x)*)")
_ANY_WIDTH_INT = re.compile(r"[su]?i[1-9]\d{0,6}")
_ELEM_NAME = re.compile(r"(?:complex<\s*(?:f32|f64)\s*>|[a-zA-Z][a-zA-Z0-9]*)")
_SIMPLE_TENSOR = re.compile(r"tensor<[0-9?x]*[a-z][a-z0-9]*>")
# the simple tensor types parsed so far, by text, shared by all parses (see Parser.type_cache)
SHARED_TYPES: dict = {}
# attribute dictionaries this long or longer are remembered by their text (parse_attr_dict_body)
_DICT_MEMO_MIN = 40
_DICT_MEMO = True           # (tests turn it off to compare)
_NUMBER_START = frozenset("0123456789+-")     # (what a NUMBER match starts with; '' is not in it)
_MAX_SHARED_TYPES = 1 << 16
_UNSIGNED_STORAGE = re.compile(r"u(\d+)(?![\w.])")
_SIGNED_STORAGE = re.compile(r"si(\d+)(?![\w.])")



def _fits_i64(v) -> bool:
    """Every integer of a struct field's value (a list of lists at most) fits MLIR's int64_t."""
    if isinstance(v, tuple):
        return all(_fits_i64(x) for x in v)
    return not isinstance(v, int) or isinstance(v, bool) or -(1 << 63) <= v < 1 << 63


# mnemonics of StableHLO/CHLO attributes written `#stablehlo.name<...>` besides the structs of
# STRUCT_FIELDS (which have a fixed field list)
_KNOWN_STRUCTS = frozenset(("bounds", "type_extensions", "result_accuracy_mode", "dot_algorithm",
                            "axis_ref", "replica_group_mesh_axes", "mesh", "mesh_axis",
                            "sub_axis_info"))

class _LocRef(Location):
    """A reference to a `#loc` alias that may be defined later in the file."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name


def _full_storage_range(storage: ElementType):
    """(min, max) of a quantized storage type's full range: what an omitted range means."""
    if storage.is_unsigned:
        return 0, (1 << storage.bits) - 1
    return -(1 << (storage.bits - 1)), (1 << (storage.bits - 1)) - 1


class TypeAttrParser:
    """Type, attribute and location parsing over `self.sc` (a lexer.Scanner)."""

    # ================================================================ nesting
    def _deeper(self, what: str):
        self.depth += 1
        if self.depth > self.limits.max_nesting:
            check_depth(self.limits.max_nesting + 1, self.limits, what, self.sc.location())

    def parse_type(self) -> Type:
        self._deeper("types")
        try:
            return self._parse_type()
        finally:
            self.depth -= 1

    def parse_attribute(self) -> Attribute:
        self._deeper("attributes")
        try:
            return self._parse_attribute()
        finally:
            self.depth -= 1

    # ================================================================ types
    def _parse_type(self) -> Type:
        sc = self.sc
        sc.ws()
        s = sc.s
        p = sc.pos
        c = s[p:p + 1]
        if s.startswith("tensor<", p):
            m = _SIMPLE_TENSOR.match(s, p)
            if m:
                key = m.group(0)
                t = self.type_cache.get(key)
                if t is None:
                    sc.pos = p + 7
                    t = self._parse_tensor_body()
                    if sc.pos != m.end():     # not what the simple form covers: no caching
                        return t
                    cache = self.type_cache
                    if len(cache) >= _MAX_SHARED_TYPES:
                        cache.clear()
                    cache[key] = t
                sc.pos = m.end()
                return t
            sc.pos = p + 7
            return self._parse_tensor_body()
        if c == "(":
            return self.parse_function_type()
        if c == "!":
            m = sc.match(BANG_ID)
            if not m:
                raise sc.error("expected a dialect type name after '!'")
            name = m.group(1)
            if name in self.type_aliases:
                return self.type_aliases[name]
            if name in ("stablehlo.token", "mhlo.token"):
                return TokenType(name.split(".")[0])
            if name == "quant.uniform":
                return self._parse_quant()
            if sc.peek("<"):
                body = sc.balanced("<", ">")
                return OpaqueType("!" + name + body)
            return OpaqueType("!" + name)
        if s.startswith("memref<", p) or s.startswith("vector<", p):
            sc.pos = s.index("<", p)     # builtin types we only carry, never interpret
            return OpaqueType(s[p:sc.pos] + sc.balanced("<", ">"))
        if s.startswith("tuple<", p):
            sc.pos = p + 6
            types = []
            if not sc.accept(">"):
                types.append(self.parse_type())
                while sc.accept(","):
                    types.append(self.parse_type())
                sc.expect(">")
            return TupleType(tuple(types))
        if s.startswith("none", p) and not (s[p + 4:p + 5].isalnum()):
            sc.pos = p + 4
            return NoneType()
        return self.parse_element_type()

    def parse_element_type(self) -> ElementType:
        sc = self.sc
        sc.ws()
        m = _ELEM_NAME.match(sc.s, sc.pos)
        if m:
            name = m.group(0)
            if name.startswith("complex"):
                name = "complex<" + name[8:-1].strip() + ">"
            et = ELEMENT_TYPES.get(name)
            if et is not None:
                sc.pos = m.end()
                return et
            if _ANY_WIDTH_INT.fullmatch(name):
                # an integer width StableHLO does not have (`i10`): MLIR reads it, the
                # verifier rejects it wherever an op's operands or results are constrained
                sc.pos = m.end()
                return OpaqueType(name)
        if sc.peek("!"):
            t = self.parse_type()
            if isinstance(t, (QuantizedType,)):
                return t
            return t
        raise sc.error("expected type")

    def _parse_tensor_body(self) -> Type:
        sc = self.sc
        sc.ws()
        if sc.accept("*"):
            sc.expect("x")
            et = self.parse_element_type()
            sc.expect(">")
            return UnrankedTensorType(et)
        m = _DIMS.match(sc.s, sc.pos)
        dims = []
        if m and m.group(1):
            at = sc.pos
            for d in m.group(1).split("x")[:-1]:
                if d == "?":
                    dims.append(None)
                    continue
                v = sc.int_value(d, at)
                if v >= 1 << 63:
                    raise sc.error(f"dimension {d} does not fit in 64 bits", at)
                dims.append(v)
                at += len(d) + 1
            sc.pos = m.end()
        et = self.parse_element_type()
        enc = None
        if sc.accept(","):
            sc.ws()
            enc_pos = sc.pos
            enc = self.parse_attribute()
            if isinstance(enc, StructAttr) and enc.name == "bounds":
                # upstream's bounds encoding is verified when the type is built, i.e. here
                bs = dict(enc.fields).get("bounds", ())
                if len(bs) != len(dims):
                    raise sc.error(f"Bounds length is {len(bs)}, expected to be equal to rank({len(dims)}) "
                                   "of the tensor", enc_pos)
                for i, (d, b) in enumerate(zip(dims, bs)):
                    if d is not None and b is not None:
                        raise sc.error(f"Static dimension {i} cannot have a bound, use ShapedType::kDynamic "
                                       "to indicate a missing bound", enc_pos)
        sc.expect(">", "to close tensor type")
        return TensorType(tuple(dims), et, enc)

    def _parse_quant(self) -> QuantizedType:
        sc = self.sc
        sc.expect("<")
        sc.ws()
        um = _UNSIGNED_STORAGE.match(sc.s, sc.pos)
        if um:       # quant spells unsigned storage `u8`; ours is the ui8 element type
            sc.pos = um.end()
            storage = ELEMENT_TYPES.get("ui" + um.group(1))
            if storage is None:
                raise sc.error(f"unsupported quantized storage type u{um.group(1)}", um.start())
        elif sc.s.startswith("si", sc.pos) and _SIGNED_STORAGE.match(sc.s, sc.pos):
            # an explicitly signed storage type: the quant dialect accepts it, StableHLO's
            # verifier rejects it, so it is kept distinct from the signless i<N>
            m = _SIGNED_STORAGE.match(sc.s, sc.pos)
            base = ELEMENT_TYPES.get("i" + m.group(1))
            if base is None:
                raise sc.error(f"unsupported quantized storage type si{m.group(1)}")
            sc.pos = m.end()
            storage = ElementType("si" + m.group(1), "signed", base.bits, base.dtype_name)
        else:
            pos = sc.pos
            storage = self.parse_element_type()
            if not isinstance(storage, ElementType):
                raise sc.error("expected an integer storage type", pos)
        smin = smax = None
        if sc.accept("<"):
            smin = sc.integer()
            sc.expect(":")
            smax = sc.integer()
            sc.expect(">")
            if (smin, smax) == _full_storage_range(storage):
                smin = smax = None      # the default range: the same type as plain `i8`
        sc.expect(":")
        pos = sc.pos
        expressed = self.parse_element_type()
        if not (isinstance(expressed, ElementType) and expressed.is_float):
            raise sc.error("expressed type of a quantized type must be a floating-point type", pos)
        axis = None
        if sc.accept(":"):
            axis = sc.integer()
        sc.expect(",")
        scales, zps = [], []

        def one():
            at = sc.pos
            scale = self._float_literal()
            if not (0.0 < scale < float("inf")):     # (NaN fails too)
                raise sc.error(f"illegal scale: {scale}", at)
            scales.append(scale)
            zps.append(sc.integer() if sc.accept(":") else 0)
        if sc.accept("{"):
            one()
            while sc.accept(","):
                one()
            sc.expect("}")
        else:
            one()
        sc.expect(">")
        return QuantizedType(storage, expressed, tuple(scales), tuple(zps), axis, smin, smax,
                             not storage.is_unsigned)

    def _float_literal(self) -> float:
        sc = self.sc
        m = sc.match(NUMBER)
        if not m:
            raise sc.error("expected number")
        t = m.group(0)
        if "0x" in t:
            bits = sc.int_value(t, m.start())
            if not 0 <= bits < 1 << 64:
                raise sc.error(f"hexadecimal float literal {t[:40]} does not fit in 64 bits", m.start())
            return float(np.frombuffer(bits.to_bytes(8, "little"), np.float64)[0])
        return sc.float_value(t, m.start())

    def parse_function_type(self) -> FunctionType:
        sc = self.sc
        sc.expect("(")
        ins = []
        if not sc.accept(")"):
            ins.append(self.parse_type())
            while sc.accept(","):
                ins.append(self.parse_type())
            sc.expect(")")
        sc.expect("->")
        outs = self.parse_result_type_list()
        return FunctionType(tuple(ins), tuple(outs))

    def parse_result_type_list(self) -> List[Type]:
        sc = self.sc
        if sc.peek("("):
            save = sc.pos
            sc.accept("(")
            outs = []
            if sc.accept(")"):
                if sc.peek("->"):     # a function type as the single result
                    sc.pos = save
                    return [self.parse_function_type()]
                return outs
            outs.append(self.parse_type())
            while sc.accept(","):
                outs.append(self.parse_type())
            sc.expect(")")
            if sc.peek("->"):
                sc.pos = save
                return [self.parse_function_type()]
            return outs
        return [self.parse_type()]

    def parse_type_list(self) -> List[Type]:
        types = [self.parse_type()]
        while self.sc.accept(","):
            types.append(self.parse_type())
        return types

    # ================================================================ attributes
    def _parse_attribute(self) -> Attribute:
        sc = self.sc
        sc.ws()
        s = sc.s
        p = sc.pos
        c = s[p:p + 1]
        if c == '"':
            v = sc.string()
            if sc.peek(":") and not sc.peek("::"):
                save = sc.pos
                sc.accept(":")
                try:
                    return StringAttr(v, self.parse_type())
                except ParseError:
                    sc.pos = save
            return StringAttr(v)
        if c == "[":
            sc.pos += 1
            elems = []
            if not sc.accept("]"):
                elems.append(self.parse_attribute())
                while sc.accept(","):
                    elems.append(self.parse_attribute())
                sc.expect("]")
            return ArrayAttr(tuple(elems))
        if c == "{":
            return self.parse_attr_dict_body()
        if c in _NUMBER_START:
            # (a number: no branch below but the number's and, where no number matches, the
            # type's applies to text starting so)
            return self._number_or_type(s, p)
        if c == "@":
            return self._parse_symbol_ref()
        if c == "#":
            return self._parse_hash_attr()
        if s.startswith("dense<", p):
            return self._parse_dense()
        if s.startswith("dense_resource<", p):
            sc.pos = p + len("dense_resource<")
            key = sc.match(re.compile(r"[\w$.\-]+"))
            if not key:
                raise sc.error("expected resource key")
            sc.expect(">")
            sc.expect(":")
            t = self.parse_type()
            return DenseResourceAttr(t, key.group(0))
        if s.startswith("array<", p):
            sc.pos = p + 6
            et_pos = sc.pos
            et = self.parse_element_type()
            if not isinstance(et, ElementType) or not (et.is_integer or et.is_float):
                raise sc.error("a dense array holds integers or floats", et_pos)
            vals = []
            if sc.accept(":"):
                vals.append(self._scalar_for(et))
                while sc.accept(","):
                    vals.append(self._scalar_for(et))
            sc.expect(">")
            return DenseArrayAttr(et, tuple(vals))
        if s.startswith("affine_map<", p):
            sc.pos = p + 10
            return AffineMapAttr("affine_map" + sc.balanced("<", ">"))
        if s.startswith("loc(", p):
            return self.parse_location()
        if sc.accept_keyword("true"):
            return BoolAttr(True)
        if sc.accept_keyword("false"):
            return BoolAttr(False)
        if sc.accept_keyword("unit"):
            return UnitAttr()
        return self._number_or_type(s, p)

    def _number_or_type(self, s, p) -> Attribute:
        """The number attribute at `p`, else a type used as an attribute."""
        m = NUMBER.match(s, p)
        if m:
            return self._number_attribute(m)
        try:
            return TypeAttr(self.parse_type())
        except ParseError:
            raise self.sc.error("expected attribute")

    def _number_attribute(self, m) -> Attribute:
        """The attribute of a NUMBER match at the scanner's position, with its `: type` if any."""
        sc = self.sc
        p = m.start()
        sc.pos = m.end()
        text = m.group(0)
        t = None
        if sc.accept(":"):
            tpos = sc.pos
            t = self.parse_type()
        is_float_text = ("." in text or "e" in text or "E" in text) and "0x" not in text
        if t is None:
            if is_float_text:
                return FloatAttr(sc.float_value(text, p), ELEMENT_TYPES["f64"])
            return IntegerAttr(self._int_in_range(text, p, ELEMENT_TYPES["i64"]), ELEMENT_TYPES["i64"])
        if isinstance(t, ElementType) and t.is_float:
            if "0x" in text and not is_float_text:
                return FloatAttr(float(dense.bits_to_float(sc.int_value(text, p), t)), t)
            return FloatAttr(sc.float_value(text, p), t)
        if not isinstance(t, ElementType) or not t.is_integer:
            raise sc.error(f"a number attribute needs an integer, index or float type, not {t}", tpos)
        if is_float_text:
            raise sc.error(f"expected an integer literal for type {t}, got '{text[:40]}'", p)
        v = self._int_in_range(text, p, t)
        if t.is_bool:               # MLIR's BoolAttr is its i1 IntegerAttr: one attribute
            return BoolAttr(v != 0)
        return IntegerAttr(v, t)

    def _int_in_range(self, text: str, pos: int, t: ElementType) -> int:
        """An integer literal's value, checked against the width of `t` as MLIR checks it
        (a signless integer takes both the signed and the unsigned range)."""
        sc = self.sc
        v = sc.int_value(text, pos)
        if t.kind == "index":
            bits = 64
        else:
            bits = t.bits
        if t.kind == "bool":
            ok = v in (0, 1, -1)
        elif t.kind == "unsigned":
            ok = 0 <= v < 1 << bits
        else:
            ok = -(1 << (bits - 1)) <= v < 1 << bits
        if not ok:
            raise sc.error(f"integer constant {text[:40]} out of range for type {t}", pos)
        return v

    def _scalar_for(self, et: ElementType):
        sc = self.sc
        if et.is_bool:
            if sc.accept_keyword("true"):
                return True
            if sc.accept_keyword("false"):
                return False
            return bool(sc.integer())
        if et.is_float:
            return self._float_literal_typed(et)
        sc.ws()
        m = NUMBER.match(sc.s, sc.pos)
        if m is None or "." in m.group(0):
            return sc.integer()         # (raises the scanner's own error)
        sc.pos = m.end()
        v = self._int_in_range(m.group(0), m.start(), et)
        bits = 64 if et.kind == "index" else et.bits
        if et.kind in ("signed", "index") and v >= 1 << (bits - 1):
            v -= 1 << bits              # a signless literal past the signed range wraps, as in MLIR
        return v

    def _float_literal_typed(self, et):
        sc = self.sc
        m = sc.match(NUMBER)
        if not m:
            if sc.accept_keyword("inf"):
                return float("inf")
            if sc.accept_keyword("nan"):
                return float("nan")
            raise sc.error("expected number")
        t = m.group(0)
        if "0x" in t and "." not in t:
            return float(dense.bits_to_float(sc.int_value(t, m.start()), et))
        return sc.float_value(t, m.start())

    def _parse_symbol_ref(self) -> SymbolRefAttr:
        sc = self.sc
        parts = []
        while True:
            sc.expect("@")
            sc.ws()
            if sc.peek('"'):
                parts.append(sc.string())
            else:
                m = re.compile(r"[\w$.\-]+").match(sc.s, sc.pos)
                if not m:
                    raise sc.error("expected symbol name")
                sc.pos = m.end()
                parts.append(m.group(0))
            if not sc.accept("::"):
                break
        return SymbolRefAttr(parts[0], tuple(parts[1:]))

    def parse_attr_dict_body(self) -> DictAttr:
        sc = self.sc
        sc.expect("{")
        start = sc.pos - 1
        s = sc.s
        # a dictionary spelled exactly as one read before in this parse (custom_call's attributes
        # repeat) is the same dictionary: its parse reads nothing outside its braces and the
        # aliases it may use have not changed since (Parser.dict_memo is emptied where one is
        # defined); read again at no greater nesting depth, it meets the same limits
        memo = self.dict_memo
        if memo:
            for text, d, depth in memo.get(s[start:start + _DICT_MEMO_MIN], ()):
                if self.depth <= depth and s.startswith(text, start):
                    sc.pos = start + len(text)
                    return d
        d = self._parse_attr_dict_entries()
        n = sc.pos - start
        if _DICT_MEMO_MIN <= n <= 1 << 14 and _DICT_MEMO:
            hits = memo.setdefault(s[start:start + _DICT_MEMO_MIN], [])
            if len(hits) < 8:
                hits.append((s[start:sc.pos], d, self.depth))
        return d

    def _parse_attr_dict_entries(self) -> DictAttr:
        sc = self.sc
        entries = []
        seen = set()
        if not sc.accept("}"):
            while True:
                sc.ws()
                if sc.peek('"'):
                    key = sc.string()
                else:
                    key = sc.bare_id("attribute name")
                if key in seen:
                    raise sc.error(f"duplicate attribute '{key}'")
                seen.add(key)
                if sc.accept("="):
                    entries.append((key, self.parse_attribute()))
                else:
                    entries.append((key, UnitAttr()))
                if not sc.accept(","):
                    break
            sc.expect("}")
        return DictAttr(tuple(entries))

    def _parse_dense(self) -> Attribute:
        sc = self.sc
        start = sc.pos
        sc.pos += 6
        open_pos = sc.pos - 1
        sc.ws()
        hexstr = None
        if sc.s.startswith('"0x', sc.pos):    # hex payload: slice it out, no per-char regex
            end = sc.s.find('"', sc.pos + 1)
            if end < 0:
                raise sc.error("unterminated string")
            hexstr = sc.s[sc.pos + 1:end]
            sc.pos = end + 1
            sc.expect(">")
            literal = None
        elif sc.peek('"'):
            body = sc.string()
            sc.expect(">")
            hexstr = body
            literal = None
        else:
            sc.pos = open_pos
            raw = sc.balanced("<", ">")   # up to the matching '>' of dense<...>
            literal = raw[1:-1]
        sc.expect(":", "after dense literal")
        t = self.parse_type()
        key = None
        if literal is not None and len(literal) <= 64:    # small literals repeat: parse once
            key = (literal, t)
            hit = self.dense_cache.get(key)
            if hit is not None:
                return hit
        if not isinstance(t, TensorType):
            raise sc.error("dense attribute needs a tensor type", start)
        if not isinstance(dense.storage_element(t), ElementType):
            raise sc.error(f"dense attribute cannot hold elements of type {t.element_type}", start)
        if not t.is_static:
            raise sc.error("dense attribute needs a static shape", start)
        et = dense.storage_element(t)
        splat = (len(hexstr) - 2 == 2 * et.dtype.itemsize if hexstr is not None
                 else not literal.lstrip().startswith("["))
        if not splat:
            # the declared size against the limits before anything is allocated (a splat is
            # held as one value broadcast to the shape: it allocates nothing)
            check_tensor(t.shape, 8 * et.dtype.itemsize, "dense literal", sc.location(start), self.limits)
        try:
            if hexstr is not None:
                if not hexstr.startswith("0x"):
                    raise ValueError("expected a hex string")
                arr = dense.array_from_hex(hexstr[2:], t)
            else:
                arr = dense.array_from_literal(literal, t, self.limits.max_nesting - self.depth)
        except dense.TooDeep:
            check_depth(self.limits.max_nesting + 1, self.limits, "dense literal brackets", sc.location(start))
        except ValueError as e:
            raise sc.error(str(e), start)
        arr.flags.writeable = False
        attr = DenseElementsAttr(t, arr)
        if key is not None:
            self.dense_cache[key] = attr
        return attr

    def _parse_hash_attr(self) -> Attribute:
        sc = self.sc
        start = sc.pos
        m = sc.match(HASH_ID)
        if not m:
            raise sc.error("expected attribute")
        name = m.group(1)
        if name in self.attr_aliases and not sc.s.startswith("<", sc.pos):
            return self.attr_aliases[name]
        if name.startswith("loc") and not sc.s.startswith("<", sc.pos) and name not in self.attr_aliases:
            self.loc_refs = True
            return _LocRef(name)
        if name in ("stablehlo", "chlo", "mhlo", "vhlo") and sc.s.startswith("<", sc.pos):
            sc.expect("<")
            kind = sc.bare_id("enum kind")
            sc.ws()
            vpos = sc.pos
            value = sc.bare_id("enum value")
            sc.expect(">")
            cases = enum_cases(kind) if name in ("stablehlo", "chlo") else None
            if cases is not None and value not in cases:
                raise sc.error(f"expected one of {', '.join(sorted(cases))} for {kind}", vpos)
            return EnumAttr(name, kind, value)
        if name == "sdy" and sc.s.startswith("<", sc.pos):
            return syntax_sdy.parse_bare_attr(self, start)
        if name == "complex.number" and sc.s.startswith("<", sc.pos):
            return self._parse_complex_number(start)
        if "." in name:
            dialect, sub = name.split(".", 1)
            if dialect == "sdy" and sc.s.startswith("<", sc.pos):
                return syntax_sdy.parse_attr(self, sub, start)
            if dialect in ("stablehlo", "chlo", "mhlo") and sc.s.startswith("<", sc.pos):
                if dialect != "mhlo" and sub not in _KNOWN_STRUCTS and sub not in STRUCT_FIELDS:
                    # these dialects' attribute parsers know their mnemonics; anything else
                    # would be kept as an opaque struct whose fields print differently
                    raise sc.error(f"unknown attribute #{dialect}.{sub}", start)
                return self._parse_struct(dialect, sub)
            if sc.s.startswith("<", sc.pos):
                body_pos = sc.pos
                body = sc.balanced("<", ">")
                if dialect == "vhlo":
                    _check_vhlo_attr(sc, sub, body, body_pos)
                return OpaqueAttr("#" + name + body)
            return OpaqueAttr("#" + name)
        if name in self.attr_aliases:
            return self.attr_aliases[name]
        raise sc.error(f"undefined attribute alias #{name}", start)

    def _parse_complex_number(self, start: int) -> ComplexAttr:
        """`#complex.number<:f32 1.0, 2.0>`, optionally followed by its type `: complex<f32>`
        (MLIR's complex::NumberAttr: the parts are float literals read as doubles, then
        rounded to the part type)."""
        sc = self.sc
        sc.expect("<")
        sc.expect(":")
        sc.ws()
        tpos = sc.pos
        part = self.parse_element_type()
        if not isinstance(part, ElementType) or not part.is_float:
            raise sc.error(f"the parts of a #complex.number must be of a float type, got {part}", tpos)
        ct = ELEMENT_TYPES.get(f"complex<{part}>")
        if ct is None:
            raise sc.error(f"#complex.number of {part}: complex<{part}> is not a StableHLO element type "
                           f"(complex<f32> and complex<f64> are)", tpos)
        real = self._complex_part("real")
        sc.expect(",")
        imag = self._complex_part("imaginary")
        sc.expect(">")
        save = sc.pos
        if sc.accept(":") and not sc.peek(":"):
            sc.ws()
            spos = sc.pos
            try:
                t = self.parse_type()
            except ParseError:
                t = None
            if isinstance(t, ElementType) and t.is_complex:
                if t != ct:
                    raise sc.error(f"#complex.number of {part} has type {ct}, not {t}", spos)
            else:
                sc.pos = save        # not this attribute's type (e.g. an op's trailing type)
        else:
            sc.pos = save
        return ComplexAttr(real, imag, ct)

    def _complex_part(self, which: str) -> float:
        """One part of a #complex.number: a decimal float literal (`1.0`, `-2.5e3`), `inf` or
        `nan` with an optional `-`, or the 64 bits of a double in hexadecimal."""
        sc = self.sc
        sc.ws()
        pos = sc.pos
        neg = sc.accept("-")
        if sc.accept_keyword("inf"):
            return -math.inf if neg else math.inf
        if sc.accept_keyword("nan"):
            return -math.nan if neg else math.nan
        sc.pos = pos
        m = sc.match(NUMBER)
        if not m or m.group(0).startswith("+"):
            raise sc.error(f"expected a float literal for the {which} part of #complex.number", pos)
        text = m.group(0)
        if "0x" in text:
            if text.startswith("-"):
                raise sc.error("a hexadecimal float literal (the bits of a double) takes no sign", pos)
            bits = sc.int_value(text, pos)
            if bits >= 1 << 64:
                raise sc.error(f"hexadecimal float literal {text[:40]} does not fit in 64 bits", pos)
            return float(np.frombuffer(bits.to_bytes(8, "little"), np.float64)[0])
        if "." not in text and "e" not in text and "E" not in text:
            raise sc.error(f"expected a float literal for the {which} part of #complex.number, "
                           f"got the integer {text[:40]} (write {text[:40]}.0)", pos)
        return sc.float_value(text, pos)

    def _parse_struct(self, dialect: str, name: str) -> Attribute:
        sc = self.sc
        sc.expect("<")
        if name == "conv" and (sc.peek("[") or sc.peek_keyword("raw")):
            start = sc.pos
            if sc.accept_keyword("raw"):
                fields = self._struct_fields(name)
            else:
                fields = parse_conv_dims(self)
                sc.expect(">")
            return self._checked_struct(StructAttr(dialect, name, fields), start)
        if name in ("bounds",):
            vals = []
            if not sc.accept(">"):
                while True:
                    vals.append(None if sc.accept("?") else sc.i64())
                    if not sc.accept(","):
                        break
                sc.expect(">")
            return StructAttr(dialect, name, (("bounds", tuple(vals)),))
        if name in ("result_accuracy_mode",):
            v = sc.bare_id()
            sc.expect(">")
            return StructAttr(dialect, name, (("value", v),))
        start = sc.pos
        fields = self._struct_fields(name)
        if name == "type_extensions" and dialect == "stablehlo":
            # the long spelling of `#stablehlo.bounds<...>` (what MLIR prints it as)
            f = dict(fields)
            if set(f) != {"bounds"} or not isinstance(f["bounds"], tuple) or \
                    any(v is not None and type(v) is not int for v in f["bounds"]):
                raise sc.error("expected #stablehlo.type_extensions<bounds = [...]>", start)
            return StructAttr(dialect, "bounds", (("bounds", f["bounds"]),))
        if name == "result_accuracy":
            _check_result_accuracy(sc, dict(fields), start)
        attr = self._checked_struct(StructAttr(dialect, name, fields), start)
        if name == "dot_algorithm" and dialect == "stablehlo":
            # upstream verifies the attribute as it is built, at its own position
            problems = dot_algorithm_problems(attr)
            if problems:
                raise ParseError(problems[0][1], sc.location(start))
        return attr

    def _checked_struct(self, attr: StructAttr, start: int) -> StructAttr:
        """A struct whose fields hold values of the kinds the spec declares (as MLIR's
        attribute parsers require), so that it prints back as the same struct."""
        problem = struct_problem(attr)
        if problem is not None:
            raise self.sc.error(problem, start)
        return attr

    def _struct_fields(self, name):
        sc = self.sc
        got = {}
        order = []
        known = STRUCT_FIELDS.get(name)
        if not sc.accept(">"):
            while True:
                sc.ws()
                key_pos = sc.pos
                key = sc.bare_id("field name")
                if known and key not in dict(known):
                    raise sc.error("expected one of: " + ", ".join(f"`{k}`" for k, _ in known)
                                   + f" (unknown field '{key}' in #{name})", key_pos)
                if key in got:
                    raise sc.error(f"duplicated `{key}` entry in #{name}", key_pos)
                sc.expect("=")
                val_pos = sc.pos
                got[key] = self._struct_value()
                if known and isinstance(got[key], int) and not isinstance(got[key], bool) and \
                        _struct_field_kind(name, key) == "f64":
                    # an APFloat field: `1` is 1.0 and a hexadecimal literal holds its bits
                    # (how MLIR prints inf and nan), not an integer
                    got[key] = self._f64_of_int_literal(got[key], val_pos)
                elif not _fits_i64(got[key]):
                    raise sc.error(f"an integer of `{key}` in #{name} does not fit in i64", val_pos)
                order.append(key)
                if not sc.accept(",") or sc.peek(">"):
                    break
            sc.expect(">")
        if known:
            return tuple((k, got.get(k, d)) for k, d in known)
        return tuple((k, got[k]) for k in order)

    def _f64_of_int_literal(self, v: int, pos: int) -> float:
        sc = self.sc
        if sc.s[pos:sc.pos].strip().lstrip("+-")[:2] in ("0x", "0X"):
            if not 0 <= v < 1 << 64:
                raise sc.error("hexadecimal float literal does not fit in 64 bits", pos)
            return float(np.frombuffer(v.to_bytes(8, "little"), np.float64)[0])
        try:
            return float(v)
        except OverflowError:
            raise sc.error("integer literal too large for an f64 field", pos) from None

    def _struct_value(self):
        sc = self.sc
        if sc.accept("["):
            return tuple(sc.delimited("[", "]", self._struct_value, opened=True))
        if sc.accept("?"):
            return None
        if sc.accept_keyword("true"):
            return True
        if sc.accept_keyword("false"):
            return False
        sc.ws()
        m = NUMBER.match(sc.s, sc.pos)
        if m:
            sc.pos = m.end()
            t = m.group(0)
            if "." in t or ("e" in t.lower() and "0x" not in t):
                return sc.float_value(t, m.start())
            v = sc.int_value(t, m.start())
            if sc.accept(":"):
                # a typed integer (`0 : i64`, the elements of an array attribute such as the
                # axes of #stablehlo.replica_group_mesh_axes)
                ty = self.parse_type()
                if not isinstance(ty, ElementType) or ty.kind not in ("bool", "signed", "unsigned", "index"):
                    raise sc.error(f"integer literal not valid for specified type {ty}", m.start())
                return IntegerAttr(v, ty)
            return v
        if sc.peek("#") or sc.peek('"') or sc.peek("@"):
            return self.parse_attribute()
        if sc.accept("("):
            pre = sc.integer()
            sc.expect(")")
            size = sc.integer()
            return StructAttr("stablehlo", "sub_axis_info", (("pre_size", pre), ("size", size)))
        return self.parse_type()

    def parse_location(self) -> Location:
        sc = self.sc
        sc.expect("loc")
        sc.expect("(")
        loc = self._parse_location_body()
        sc.expect(")")
        return loc

    def _parse_location_body(self) -> Location:
        self._deeper("locations")
        try:
            return self._parse_location_body_inner()
        finally:
            self.depth -= 1

    def _parse_location_body_inner(self) -> Location:
        sc = self.sc
        sc.ws()
        if sc.peek("#"):
            m = sc.match(HASH_ID)
            if not m:
                raise sc.error("expected a location alias (#loc...)")
            name = m.group(1)
            if name in self.attr_aliases and isinstance(self.attr_aliases[name], Location):
                return self.attr_aliases[name]
            self.loc_refs = True
            return _LocRef(name)
        if sc.accept_keyword("unknown"):
            return UnknownLoc()   # a fresh instance: written out (an op's implicit location is UNKNOWN_LOC itself)
        if sc.accept_keyword("callsite"):
            sc.expect("(")
            callee = self._parse_location_body()
            sc.expect_keyword("at")
            caller = self._parse_location_body()
            sc.expect(")")
            return CallSiteLoc(callee, caller)
        if sc.accept_keyword("fused"):
            meta = None
            if sc.accept("<"):
                meta = self.parse_attribute()
                sc.expect(">")
            sc.expect("[")
            locs = []
            if not sc.accept("]"):
                locs.append(self._parse_location_body())
                while sc.accept(","):
                    locs.append(self._parse_location_body())
                sc.expect("]")
            return FusedLoc(tuple(locs), meta)
        if sc.peek('"'):
            s = sc.string()
            if sc.accept(":"):
                line = sc.integer()
                sc.expect(":")
                col = sc.integer()
                end_line = end_col = None
                if sc.accept_keyword("to"):
                    if sc.accept(":"):
                        end_line = line
                        end_col = sc.integer()
                    else:
                        end_line = sc.integer()
                        sc.expect(":")
                        end_col = sc.integer()
                return FileLineColLoc(s, line, col, end_line, end_col)
            child = None
            if sc.accept("("):
                child = self._parse_location_body()
                sc.expect(")")
            return NameLoc(s, child)
        raise sc.error("expected location")

    def parse_trailing_location(self) -> Location:
        if self.sc.peek("loc("):
            return self.parse_location()
        return UNKNOWN_LOC

    # ================================================================ operations


def _check_result_accuracy(sc, f, pos):
    """The attribute's own invariant, checked while parsing as upstream does."""
    mode = f.get("mode")
    mode_name = dict(mode.fields).get("value") if isinstance(mode, StructAttr) else None
    if mode_name == "HIGHEST" and any(f.get(k, 0) not in (0, 0.0, None) for k in ("atol", "rtol", "ulps")):
        raise sc.error("Invalid tolerances for ResultAccuracyAttr with mode HIGHEST, must be all zero.", pos)


_VHLO_DICT_KEY = re.compile(r'[{,]\s*(#?[\w.]+|"[^"]*")\s*=')


def _check_vhlo_attr(sc, sub, body, pos):
    """VHLO attributes hold only VHLO attributes (checked as upstream does while parsing)."""
    if sub == "dict_v1":
        for key in _VHLO_DICT_KEY.findall(body):
            if not key.startswith("#vhlo."):
                raise sc.error("expected VHLO key attribute", pos)
    elif sub == "result_accuracy_v1":
        m = re.search(r"mode\s*=\s*(#[\w.]+)", body)
        if m and not m.group(1).startswith("#vhlo."):
            raise sc.error("expected VHLO result accuracy mode", pos)
