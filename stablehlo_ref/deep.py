"""Room for deeply nested input: the parser, printer, reader and verifier recurse once per level
of nesting (regions, brackets, nested types and attributes), so a program nested
`Limits.max_nesting` deep needs more stack than Python's default recursion limit (1,000) and
the main thread's C stack allow. `call_with_room` runs such a function (a pure one: parse, print, read) and,
if it reaches Python's recursion limit, runs it again in a helper thread with a large stack and
a recursion limit raised to fit; the explicit depth counters
(`check_depth`) stop input past `max_nesting` with a LimitError before Python's limit is near.
"""
from __future__ import annotations

import sys
import threading
from typing import Callable, Optional

from .errors import LimitError
from .limits import DEFAULT, FLAGS, Limits

# Python frames one level of nesting may take (region -> op -> custom syntax -> region ..., or
# bracket -> element -> bracket); the recursion limit is raised to this times max_nesting.
FRAMES_PER_LEVEL = 40
# C stack for the helper thread: generous, it is only reserved, not touched, unless used.
STACK_BYTES = 512 << 20

_lock = threading.Lock()


def check_depth(depth: int, limits: Limits, what: str, location: Optional[str] = None) -> None:
    if depth > limits.max_nesting:
        raise LimitError(f"{what} nested more than {limits.max_nesting} deep", location,
                         FLAGS["max_nesting"])


def call_with_room(fn: Callable, *args, limits: Optional[Limits] = None, **kw):
    """fn(*args, **kw), in a thread whose stack and recursion limit fit `limits.max_nesting`
    levels; exceptions propagate to the caller unchanged."""
    limits = limits or DEFAULT
    if threading.current_thread().name == "stablehlo-ref-deep":
        return fn(*args, **kw)       # already inside one
    try:
        # most input is shallow: try on this thread first (no thread to start), and only
        # input deep enough to reach Python's recursion limit is run again with room
        return fn(*args, **kw)
    except RecursionError:
        pass
    need = limits.max_nesting * FRAMES_PER_LEVEL + 2_000
    box = {}

    def target():
        try:
            box["value"] = fn(*args, **kw)
        except BaseException as e:   # noqa: BLE001 - handed to the calling thread as is
            box["error"] = e

    with _lock:
        old_limit = sys.getrecursionlimit()
        if need > old_limit:
            sys.setrecursionlimit(need)
        old_size = threading.stack_size()
        try:
            threading.stack_size(STACK_BYTES)
            t = threading.Thread(target=target, name="stablehlo-ref-deep", daemon=True)
            t.start()
        finally:
            threading.stack_size(old_size)
    try:
        t.join()
    finally:
        if not t.is_alive():
            with _lock:
                if sys.getrecursionlimit() == need and need > old_limit:
                    sys.setrecursionlimit(old_limit)
    if "error" in box:
        e = box["error"]
        raise e.with_traceback(e.__traceback__)
    return box.get("value")
