"""The fork server's line framing: requests and replies are JSON lines; a reply may be hundreds of MiB."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Callable, Iterator

if TYPE_CHECKING:
    from harness import Harness


# Bound when the host starts, before any game runs: a game that replaces os.write/os.read in its own
# process must not get to see or rewrite the harness's replies (sandbox.py binds its own the same way).
_os_read = os.read
_os_write = os.write
_os_exit = os._exit

# The longest reply line relayed to the host (which could not hold a longer string anyway).
MAX_REPLY_LINE = 256 << 20


def split_lines(pending: list[bytes], chunk: bytes, stderr: bool=False) -> Any:
    """The lines that `chunk` completes. `pending` (a list, updated in place) holds the start of a
    line not ended yet, as the chunks it came in, joined once when its end arrives: relaying a line
    read in n pieces costs its length, not n times its length (re-joining a growing buffer at every
    64 KiB read took 175 ms for the 6 MB reply of a 20,000-step play). Stderr lines are a tail for
    people: blank ones dropped, each cut at 4,000 bytes, an endless one kept to its last 64 KiB."""
    last = chunk.rfind(b"\n")
    if last < 0:
        pending.append(chunk)
        if stderr and sum(map(len, pending)) > 65536:
            pending[:] = [b"".join(pending)[-65536:]]
        return []
    done = b"".join([*pending, chunk[:last]]) if pending else chunk[:last]
    rest = chunk[last + 1:]
    pending[:] = [rest[-65536:] if stderr else rest] if rest else []
    parts = done.split(b"\n")
    if stderr:
        return [p[:4000] for p in parts if p.strip()]
    return parts



def read_lines(read: Callable[[], bytes]) -> Iterator[Any]:
    """The lines `read()` delivers, in order; the process exits when it delivers nothing (EOF)."""
    yield from lines_of(read)
    _os_exit(0)


def lines_of(read: Callable[[], bytes]) -> Iterator[Any]:
    """The lines `read()` delivers, in order, until it delivers nothing (EOF); split as the server
    relays them (split_lines), so a huge line costs its length, not its length squared."""
    pending: list[Any] = []
    while True:
        try:
            chunk = read()
        except InterruptedError:
            continue
        if not chunk:
            return
        yield from split_lines(pending, chunk)


def serve_lines(fd: int, h: Harness) -> None:
    """Answers request lines on `fd` with the harness until EOF, then exits."""
    for line in read_lines(lambda: _os_read(fd, 1 << 16)):
        if line.strip():
            reply = h.dispatch(line.decode("utf-8", "replace")).encode("utf-8", "replace") + b"\n"
            view = memoryview(reply)
            while view:
                n = _os_write(fd, view)
                view = view[n:]

