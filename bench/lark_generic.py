"""A lark LALR(1) grammar (contextual lexer) for MLIR's generic operation syntax, used only by
bench_parse.py as the baseline the project's hand-written parser was chosen against. It builds
a lark parse tree and stops there: no IR, no types or attributes decoded, so its time is a
lower bound on what a lark-based parser would cost."""
from __future__ import annotations

GRAMMAR = r"""
start: operation*

operation: [results "="] ESCAPED_STRING "(" [values] ")" [properties] [regions] [attr_dict] ":" function_type [location]
results: RESULT ("," RESULT)*
values: VALUE ("," VALUE)*
properties: "<" attr_dict ">"
regions: "(" region ("," region)* ")"
region: "{" block* "}"
block: label operation*
     | operation+
label: BLOCK_ID ["(" block_arg ("," block_arg)* ")"] ":"
block_arg: VALUE ":" type [location]

attr_dict: "{" [attr_entry ("," attr_entry)*] "}"
attr_entry: (BARE_ID | ESCAPED_STRING) ["=" attribute]
?attribute: dense | array | dense_array | number | ESCAPED_STRING | SYMBOL | hash_attr | attr_dict | type_attr | BOOL | "unit" -> unit
number: SIGNED_NUMBER [":" type]
dense: "dense" "<" [dense_body] ">" ":" type
?dense_body: ESCAPED_STRING | dense_list | SIGNED_NUMBER | BOOL | complex
dense_list: "[" [dense_body ("," dense_body)*] "]"
complex: "(" SIGNED_NUMBER "," SIGNED_NUMBER ")"
array: "[" [attribute ("," attribute)*] "]"
dense_array: "array" "<" SCALAR [":" SIGNED_NUMBER ("," SIGNED_NUMBER)*] ">"
hash_attr: HASH_ID ["<" [hash_item ("," hash_item)*] ">"]
?hash_item: BARE_ID "=" hash_value -> field
          | hash_value
?hash_value: attribute | BARE_ID
type_attr: type

?type: tensor_type | SCALAR | function_type | BANG_ID ["<" type ("," type)* ">"] -> dialect_type | tuple_type
tensor_type: "tensor" "<" SHAPE_AND_ELEMENT ["," attribute] ">"
tuple_type: "tuple" "<" [type ("," type)*] ">"
function_type: "(" [type ("," type)*] ")" "->" (type | "(" [type ("," type)*] ")")
location: "loc" "(" loc_body ")"
?loc_body: ESCAPED_STRING [":" INT ":" INT] | "unknown" | HASH_ID

RESULT: /%[\w$.\-]+(:\d+)?/
VALUE: /%[\w$.\-]+(#\d+)?/
BLOCK_ID: /\^[\w$.\-]+/
SYMBOL: /@[\w$.\-]+/
HASH_ID: /#[\w$.\-]+/
BANG_ID: /![\w$.\-]+/
SHAPE_AND_ELEMENT: /((\d+|\?)x)*([a-z][a-z0-9]*|complex<[a-z0-9]+>)/
SCALAR: /(i|ui|si|f|bf)\d+|index|tf32|f8E\w+|complex<[a-z0-9]+>/
BOOL: "true" | "false"
BARE_ID: /[A-Za-z_][\w$.]*/

%import common.ESCAPED_STRING
%import common.SIGNED_NUMBER
%import common.INT
%import common.WS
%ignore WS
%ignore /\/\/[^\n]*/
"""


def make_parser():
    import lark
    return lark.Lark(GRAMMAR, parser="lalr", lexer="contextual", maybe_placeholders=False)
