"""The vectorized numpy reference interpreter."""
from .evaluator import Interpreter, run, TOKEN, Token
from .registry import KERNELS, kernel
