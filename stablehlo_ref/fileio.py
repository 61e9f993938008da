"""Reading and writing the command line's files safely, for files from strangers.

Inputs (`read_input`): `-` is stdin; a directory, a device or a socket is refused with one
message; a FIFO is opened without blocking, so that one with no writer ends in an error
instead of a hang; an empty input is an error where a program is expected.

Outputs (`write_output`): `-` is stdout. A regular file is replaced atomically: the data goes
to an anonymous file (`O_TMPFILE`, or a `.tmp-*` name where the file system has none) in the
target's directory, which is renamed over the target only once complete, so a process killed
mid-write leaves the old file or none. A symlink is written through (its target is replaced,
the link stays). A FIFO or character device (`/dev/null`, a terminal) is streamed to, since
it cannot be replaced. A new file gets the umask's permissions (0666 & ~umask), a replaced one
keeps its mode. Temporary names are removed on every exit path Python can catch, signals
included (`install_signal_cleanup`)."""
from __future__ import annotations

import atexit
import errno
import os
import signal
import stat
import sys
import threading
from typing import Callable, Optional, Set, Union

from .errors import UsageError

_PENDING: Set[str] = set()          # temporary names that exist now
_LOCK = threading.Lock()
_UMASK: Optional[int] = None


def _umask() -> int:
    global _UMASK
    if _UMASK is None:
        try:                         # Linux >= 4.7 reports it without changing it
            with open("/proc/self/status") as f:
                for line in f:
                    if line.startswith("Umask:"):
                        _UMASK = int(line.split()[1], 8)
                        break
        except (OSError, ValueError):
            pass
        if _UMASK is None:
            _UMASK = os.umask(0o22)
            os.umask(_UMASK)
    return _UMASK


def _cleanup_pending() -> None:
    with _LOCK:
        names = list(_PENDING)
        _PENDING.clear()
    for n in names:
        try:
            os.unlink(n)
        except OSError:
            pass


atexit.register(_cleanup_pending)


def install_signal_cleanup() -> None:
    """On SIGTERM, SIGHUP and SIGINT remove pending temporary files, then end as the signal
    would (SIGINT raises KeyboardInterrupt as usual). Call once from a main thread."""
    if threading.current_thread() is not threading.main_thread():
        return

    def on_signal(signum, frame):
        _cleanup_pending()
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        try:
            if signal.getsignal(s) in (signal.SIG_DFL, signal.default_int_handler):
                signal.signal(s, on_signal)
        except (ValueError, OSError):
            pass


def pending_temporaries() -> Set[str]:
    """The temporary names that exist now (for tests)."""
    with _LOCK:
        return set(_PENDING)


# ------------------------------------------------------------------ input
def _why(e: OSError) -> str:
    return e.strerror or str(e)


def read_input(path: str, what: str = "input", *, allow_empty: bool = False,
               max_bytes: Optional[int] = None) -> bytes:
    """All bytes of `path` (`-` = stdin). Raises UsageError (exit 2) for anything that is not
    a readable file or pipe, and for an empty input unless `allow_empty`."""
    if path == "-":
        try:
            data = sys.stdin.buffer.read() if max_bytes is None else sys.stdin.buffer.read(max_bytes + 1)
        except (OSError, AttributeError, ValueError) as e:
            raise UsageError(f"cannot read {what} from stdin: {e}") from None
        name = "stdin"
    else:
        data = _read_path(path, what, max_bytes)
        name = path
    if max_bytes is not None and len(data) > max_bytes:
        raise UsageError(f"{name}: {what} is larger than {max_bytes} bytes")
    if not data and not allow_empty:
        raise UsageError(f"{name}: {what} is empty")
    return data


def _read_path(path: str, what: str, max_bytes: Optional[int]) -> bytes:
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise UsageError(f"cannot read {what}: expected a path, got {type(path).__name__}")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise UsageError(f"cannot read {path}: {_why(e)}") from None
    except ValueError as e:          # an embedded NUL byte
        raise UsageError(f"cannot read {what}: bad path ({e})") from None
    try:
        st = os.fstat(fd)
        mode = st.st_mode
        if stat.S_ISDIR(mode):
            raise UsageError(f"cannot read {path}: is a directory")
        if stat.S_ISREG(mode):
            os.set_blocking(fd, True)
            return _read_all(fd, path, max_bytes)
        if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
            return _read_pipe(fd, path, max_bytes)
        kind = "a character device" if stat.S_ISCHR(mode) else "a block device" if stat.S_ISBLK(mode) else "not a regular file"
        raise UsageError(f"cannot read {path}: {kind} (give a file, a pipe or - for stdin)")
    finally:
        os.close(fd)


def _read_all(fd: int, path: str, max_bytes: Optional[int]) -> bytes:
    chunks = []
    total = 0
    while True:
        try:
            b = os.read(fd, 1 << 20)
        except OSError as e:
            raise UsageError(f"cannot read {path}: {_why(e)}") from None
        if not b:
            return b"".join(chunks)
        chunks.append(b)
        total += len(b)
        if max_bytes is not None and total > max_bytes:
            return b"".join(chunks)


def _read_pipe(fd: int, path: str, max_bytes: Optional[int]) -> bytes:
    """A FIFO opened with O_NONBLOCK: with no writer, the first read says end-of-file at once
    (no hang); with one, wait for its data until it closes its end."""
    import select
    chunks = []
    total = 0
    poller = select.poll()
    poller.register(fd, select.POLLIN | select.POLLHUP)
    first = True
    while True:
        try:
            b = os.read(fd, 1 << 20)
        except BlockingIOError:
            poller.poll()
            first = False
            continue
        except OSError as e:
            raise UsageError(f"cannot read {path}: {_why(e)}") from None
        if not b:
            if first and not chunks:
                raise UsageError(f"cannot read {path}: a pipe with no writer (nothing to read)")
            return b"".join(chunks)
        first = False
        chunks.append(b)
        total += len(b)
        if max_bytes is not None and total > max_bytes:
            return b"".join(chunks)


# ----------------------------------------------------------------- output
Writer = Callable[[object], None]


def write_output(path: str, data: Union[bytes, Writer], what: str = "output") -> None:
    """Write `data` (bytes, or a function that writes to a binary file object) to `path`;
    see the module docstring for what happens with each kind of target."""
    if path == "-":
        out = getattr(sys.stdout, "buffer", None)
        if out is None:
            # stdout replaced by a text stream (an embedding application): text goes there,
            # binary data cannot
            if not isinstance(data, bytes):
                raise UsageError("stdout is a text stream: give -o FILE for binary output")
            try:
                sys.stdout.write(data.decode("utf-8"))
            except UnicodeDecodeError:
                raise UsageError("stdout is a text stream: give -o FILE for binary output") from None
            return
        _emit(out, data, "stdout")
        try:
            out.flush()
        except BrokenPipeError:
            raise
        except OSError as e:
            raise UsageError(f"cannot write stdout: {_why(e)}") from None
        return
    try:
        real = os.path.realpath(path)
    except (OSError, ValueError) as e:
        raise UsageError(f"cannot write {path}: {e}") from None
    try:
        st = os.stat(real)
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise UsageError(f"cannot write {path}: {_why(e)}") from None
    if st is not None:
        m = st.st_mode
        if stat.S_ISDIR(m):
            raise UsageError(f"cannot write {path}: is a directory")
        if stat.S_ISFIFO(m) or stat.S_ISCHR(m):
            _stream(path, real, data, stat.S_ISFIFO(m))
            return
        if not stat.S_ISREG(m):
            raise UsageError(f"cannot write {path}: not a regular file, FIFO or character device")
        if not (m & 0o222) or not os.access(real, os.W_OK):
            raise UsageError(f"cannot write {path}: the file is read-only")
        mode = stat.S_IMODE(m)
    else:
        mode = 0o666 & ~_umask()
    _replace(path, real, data, mode)


def _emit(f, data, name) -> None:
    try:
        if callable(data):
            data(f)
        else:
            f.write(data)
    except BrokenPipeError:
        raise
    except OSError as e:
        raise UsageError(f"cannot write {name}: {_why(e)}") from None


def _stream(path, real, data, fifo) -> None:
    flags = os.O_WRONLY | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(real, flags | (os.O_NONBLOCK if fifo else 0))
    except OSError as e:
        if e.errno == errno.ENXIO:
            raise UsageError(f"cannot write {path}: a FIFO with no reader") from None
        raise UsageError(f"cannot write {path}: {_why(e)}") from None
    if fifo:
        os.set_blocking(fd, True)
    f = os.fdopen(fd, "wb")
    try:
        _emit(f, data, path)
        f.flush()
    except OSError as e:
        raise UsageError(f"cannot write {path}: {_why(e)}") from None
    finally:
        try:
            f.close()
        except OSError:
            pass


def _replace(path, real, data, mode) -> None:
    d = os.path.dirname(real) or "."
    fd, tmp = _open_temporary(path, d)
    try:
        with os.fdopen(fd, "wb") as f:
            _emit(f, data, path)
            f.flush()
            os.fchmod(f.fileno(), mode)
            if tmp is None:                # O_TMPFILE: give it a name only now it is complete
                tmp = _link_anonymous(path, f.fileno(), d)
        os.replace(tmp, real)
        with _LOCK:
            _PENDING.discard(tmp)
        tmp = None
    except OSError as e:
        raise UsageError(f"cannot write {path}: {_why(e)}") from None
    finally:
        if tmp is not None:
            with _LOCK:
                _PENDING.discard(tmp)
            try:
                os.unlink(tmp)
            except OSError:
                pass


def _open_temporary(path, d):
    """(fd, name): an anonymous file in `d` (name None) where the OS has O_TMPFILE, else a
    named `.tmp-*` file registered for clean-up."""
    tmpfile = getattr(os, "O_TMPFILE", 0)
    if tmpfile and os.path.isdir("/proc/self/fd"):
        try:
            return os.open(d, tmpfile | os.O_WRONLY | getattr(os, "O_CLOEXEC", 0), 0o600), None
        except OSError as e:
            if e.errno not in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL):
                raise UsageError(f"cannot write {path}: {_why(e)}") from None
    return _open_temporary_named(path, d)


def _open_temporary_named(path, d):
    import tempfile
    with _LOCK:                    # registered before a signal can see it unregistered
        try:
            fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=d)
        except OSError as e:
            raise UsageError(f"cannot write {path}: {_why(e)}") from None
        _PENDING.add(tmp)
    return fd, tmp


def _link_anonymous(path, fd, d) -> str:
    """A name in `d` for the complete anonymous file `fd`: linked where the file system
    allows (overlay file systems may not), else copied into a named temporary."""
    import secrets
    for _ in range(100):
        name = os.path.join(d, f".tmp-{secrets.token_hex(6)}")
        with _LOCK:
            try:
                os.link(f"/proc/self/fd/{fd}", name, follow_symlinks=True)
            except FileExistsError:
                continue
            except OSError:
                break
            _PENDING.add(name)
        return name
    nfd, name = _open_temporary_named(path, d)
    try:
        size = os.fstat(fd).st_size
        os.lseek(fd, 0, os.SEEK_SET)
        rfd = os.open(f"/proc/self/fd/{fd}", os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        try:
            left = size
            while left > 0:
                n = os.sendfile(nfd, rfd, None, min(left, 1 << 30))
                if n == 0:
                    raise OSError(errno.EIO, "short copy")
                left -= n
        finally:
            os.close(rfd)
        os.fchmod(nfd, stat.S_IMODE(os.fstat(fd).st_mode))
    finally:
        os.close(nfd)
    return name
