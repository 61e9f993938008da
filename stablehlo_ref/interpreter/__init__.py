"""The vectorized numpy reference interpreter. Importing the package registers every kernel
module's ops in `registry.KERNELS`; the evaluator only looks them up."""
from . import (check, chlo, collective, control, conv, dynamic, elementwise, foreign, indexing,  # noqa: F401
               linalg, movement, nn, quantized, random, reduction, sdy, sorting, windows)
from .evaluator import Interpreter, run
from .registry import KERNELS, TOKEN, Token, kernel
