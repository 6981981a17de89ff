"""SPADE Workbench harness: what environment code prints, captured and capped."""

from __future__ import annotations

import io
import json

from harness_values import OUTPUT_CAP
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness import Session

# Private references: a game may patch builtins or shared modules (undone at the next episode
# boundary, see SharedBaseline); until then the harness must keep answering with the originals.
if not TYPE_CHECKING:  # mypy reads the builtins themselves; at run time these are the originals
    len, isinstance, type, str, repr, int, float, bool = len, isinstance, type, str, repr, int, float, bool  # noqa: A001
    list, dict, tuple, set, frozenset, getattr, callable, id = list, dict, tuple, set, frozenset, getattr, callable, id  # noqa: A001
    sorted, min, max, range, any, all, next, hasattr, print = sorted, min, max, range, any, all, next, hasattr, print  # noqa: A001
_json_dumps, _json_loads = json.dumps, json.loads


# ---------------------------------------------------------------- output capture


_isascii, _encode = str.isascii, str.encode


class _BytesSide(io.RawIOBase):
    """sys.stdout.buffer of the capture: bytes are decoded (UTF-8, as SPADE's stdout) into it."""

    def __init__(self, text: Any) -> None:
        self._text = text

    def writable(self) -> Any:
        return True

    def write(self, b: Any) -> int:
        data = bytes(b)
        self._text.write(data.decode("utf-8", "replace"))
        return len(data)


class CappedOutput(io.TextIOBase):
    """Collects what environment code prints; past the cap it only counts, so a flood costs nothing.

    `written` counts the UTF-8 bytes of everything written, kept or not, until its owner sets it
    back to 0 (take() leaves it): the audit's `output-flood` check reads it."""

    def __init__(self, cap: Any=OUTPUT_CAP) -> None:
        self.cap = cap
        self.parts: list[Any] = []
        self.size = 0
        self.dropped = 0
        self.written = 0

    def writable(self) -> Any:
        return True

    # What a game may ask of sys.stdout in SPADE's process (a real text stream) answers as there:
    # `buffer` writes bytes into the same capture, `reconfigure()` is accepted. fileno() stays
    # unsupported on purpose: fd 1 is the harness's protocol, not the game's.
    name = "<stdout>"
    line_buffering = False
    write_through = False

    @property
    def buffer(self) -> Any:
        return _BytesSide(self)

    def reconfigure(self, **kw: Any) -> None:
        return None

    def write(self, s: str) -> int:
        if not isinstance(s, str):
            s = str(s)
        # An ASCII str knows it is one (a flag, no scan): a flood in big chunks costs no encoding.
        self.written += len(s) if _isascii(s) else len(_encode(s, "utf-8", "surrogatepass"))
        room = self.cap - self.size
        if room > 0:
            self.parts.append(s[:room])
            self.size += min(len(s), room)
        if len(s) > room:
            self.dropped += len(s) - max(room, 0)
        return len(s)

    def flush(self) -> None:
        pass

    def take(self) -> Any:
        text = "".join(self.parts)
        if self.dropped:
            text += f"\n\u2026[output cut: {self.dropped} more chars]"
        self.parts, self.size, self.dropped = [], 0, 0
        return text
