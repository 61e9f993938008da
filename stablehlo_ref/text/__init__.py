"""MLIR text: parser (generic + pretty syntax from the spec) and printer."""
from .parser import parse, Parser
from .printer import print_module, Printer
