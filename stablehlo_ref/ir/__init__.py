"""The in-memory IR: types, attributes, operations, modules."""
from .types import *  # noqa: F401,F403
from .types import (ElementType, TensorType, TokenType, TupleType, FunctionType, QuantizedType,
                    OpaqueType, NoneType, UnrankedTensorType, Type, element_type, ELEMENT_TYPES,
                    element_type_for_dtype, scalar_tensor)
from .attributes import *  # noqa: F401,F403
from .core import Value, Operation, Block, Region, Module, function_type, new_module
from .equality import modules_equal, assert_modules_equal
