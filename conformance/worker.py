"""The life of a worker subprocess, shared by the conformance backends (`backends.py`, serving
`_worker.py`) and the benchmarks' peers (`bench/peers.py`): native runtimes (XLA, IREE,
upstream's C++ interpreter) run in a fresh Python process, because an error there may abort
the whole process; it is restarted after a crash or a timeout.

The process is started as `python -c ...` (not fork: jax and native runtimes dislike it; not
multiprocessing's spawn: that re-imports the caller's `__main__`) and calls `entry(conn,
*args)` in the module named by `module`, with `conn` a multiprocessing Connection over a socket
pair. Its stdout/stderr go to a log file, whose tail names the reason of an abort."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
from typing import Any, Dict, Optional, Sequence


class WorkerTimeout(Exception):
    """No answer within the time given (the worker has been killed)."""


class WorkerCrashed(Exception):
    """The worker died before answering (the worker has been reaped)."""

    def __init__(self, code: Optional[int], tail: str):
        super().__init__(f"process aborted (exit code {code}){tail}")
        self.code = code
        self.tail = tail


class WorkerStartError(Exception):
    """The worker did not start or did not say it is ready."""


# argv: module, entry, socket fd, the number n of sys.path entries, n entries, the entry's args
_BOOT = ("import sys, importlib; n = int(sys.argv[4]); sys.path[:0] = sys.argv[5:5 + n]; "
         "from multiprocessing.connection import Connection; "
         "getattr(importlib.import_module(sys.argv[1]), sys.argv[2])(Connection(int(sys.argv[3])), *sys.argv[5 + n:])")


class WorkerProcess:
    """One restartable worker: `start()` waits for its first message (returned), `request(msg,
    timeout)` sends one message and returns the answer."""

    def __init__(self, module: str, entry: str, args: Sequence[str] = (), *, name: str = "worker",
                 env: Optional[Dict[str, str]] = None, path: Sequence[str] = (), start_timeout: float = 180.0):
        self.module, self.entry, self.args = module, entry, tuple(args)
        self.name = name
        self.env = dict(env or {})
        self.path = tuple(path)
        self.start_timeout = start_timeout
        self.proc = None
        self.conn = None
        self._log = None

    # ------------------------------------------------------------ lifecycle
    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self) -> Any:
        from multiprocessing.connection import Connection
        if self._log is None:
            fd, self._log = tempfile.mkstemp(prefix="stablehlo-ref-worker-", suffix=".log")
            os.close(fd)
        ours, theirs = socket.socketpair()
        env = dict(os.environ)
        for k, v in self.env.items():
            env.setdefault(k, v)
        argv = [sys.executable, "-c", _BOOT, self.module, self.entry, str(theirs.fileno()),
                str(len(self.path)), *self.path, *self.args]
        with open(self._log, "ab") as log:
            self.proc = subprocess.Popen(argv, pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL,
                                         stdout=log, stderr=log, env=env)
        theirs.close()
        self.conn = Connection(ours.detach())
        try:
            if not self.conn.poll(self.start_timeout):
                raise EOFError
            return self.conn.recv()
        except (EOFError, OSError):
            self.kill()
            raise WorkerStartError(f"{self.name} did not start{self.log_tail(0)}") from None

    def kill(self) -> None:
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait()
        if self.conn is not None:
            self.conn.close()
        self.proc = None
        self.conn = None

    def close(self) -> None:
        """Ask the worker to stop (a `None` message), wait a little, then kill; the log goes."""
        if self.conn is not None:
            try:
                self.conn.send(None)
            except OSError:
                pass
        if self.proc is not None:
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                pass
        self.kill()
        if self._log:
            try:
                os.unlink(self._log)
            except OSError:
                pass
            self._log = None

    # ------------------------------------------------------------ requests
    def log_size(self) -> int:
        return os.path.getsize(self._log) if self._log and os.path.exists(self._log) else 0

    def request(self, msg: Any, timeout: Optional[float]) -> Any:
        """Send `msg`, return the answer; WorkerTimeout / WorkerCrashed when there is none."""
        offset = self.log_size()
        self.conn.send(msg)
        try:
            if not self.conn.poll(timeout):
                self.kill()
                raise WorkerTimeout(f"no result in {timeout:g} s (worker restarted)")
            return self.conn.recv()
        except (EOFError, ConnectionError, OSError):
            code = None
            if self.proc is not None:
                try:
                    code = self.proc.wait(5)
                except subprocess.TimeoutExpired:
                    pass
            self.kill()
            raise WorkerCrashed(code, self.log_tail(offset)) from None

    def log_tail(self, offset: int) -> str:
        """The reason of an abort in what the worker wrote after `offset`: ': <line>' or ''."""
        try:
            with open(self._log, "rb") as f:
                f.seek(offset)
                data = f.read().decode("utf-8", "replace")
        except (OSError, TypeError):
            return ""
        lines = [l.strip() for l in data.splitlines() if l.strip()]
        # the abort's reason, not the stack trace after it
        interesting = [l for l in lines if "LLVM ERROR" in l or "Check failed" in l or "error" in l.lower()
                       or "Unsupported" in l or l[:1] == "F" and "]" in l[:40]]
        interesting = [l for l in interesting if not l.startswith("***")]
        pick = interesting[:1] or [l for l in lines if not l.startswith("@")][-1:]
        return f": {pick[0][:300]}" if pick else ""
