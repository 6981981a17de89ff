"""A small OpenEnv client over the standard library, for the GRPO trainer (spade_grpo.py).

The training venv has no WebSocket package, and the trainer must reach the environments only through
`spade-workbench serve-env` (OpenEnv's /ws protocol: one environment instance per connection,
`{"type": "reset"|"step"|"close", "data": ...}` in, `{"type": "observation"|"error", "data": ...}` out).
This is RFC 6455 text frames, client side, just enough for that exchange: no environment code ever
runs in the trainer's process.
"""
from __future__ import annotations

import base64
import json
import os
import socket
import struct
import urllib.request
from typing import Any
from urllib.parse import urlparse


class OpenEnvError(RuntimeError):
    pass


def get_json(url: str, path: str, token: str | None = None) -> Any:
    req = urllib.request.Request(url.rstrip("/") + path)
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.loads(r.read().decode("utf-8"))


class Session:
    """One /ws session (one environment instance on the server)."""

    def __init__(self, url: str, token: str | None = None, timeout: float = 300.0) -> None:
        u = urlparse(url)
        host = u.hostname or "127.0.0.1"
        port = u.port or 80
        self.sock = socket.create_connection((host, port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        path = "/ws" + (f"?token={token}" if token else "")
        hello = (
            f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        self.sock.sendall(hello.encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise OpenEnvError("serve-env closed the connection during the WebSocket handshake")
            head += chunk
        status, _, rest = head.partition(b"\r\n\r\n")
        first = status.split(b"\r\n")[0]
        if b" 101 " not in first:
            raise OpenEnvError("serve-env refused the session: " + first.decode(errors="replace"))
        self.buf = rest

    def _recv_exact(self, n: int) -> bytes:
        while len(self.buf) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise OpenEnvError("serve-env closed the session")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def _send(self, opcode: int, payload: bytes) -> None:
        mask = os.urandom(4)
        n = len(payload)
        if n < 126:
            head = struct.pack("!BB", 0x80 | opcode, 0x80 | n)
        elif n < 65536:
            head = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, n)
        else:
            head = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, n)
        body = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.sock.sendall(head + mask + body)

    def _recv_text(self) -> str:
        parts: list[bytes] = []
        while True:
            b0, b1 = self._recv_exact(2)
            opcode = b0 & 0x0F
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack("!H", self._recv_exact(2))[0]
            elif n == 127:
                n = struct.unpack("!Q", self._recv_exact(8))[0]
            mask = self._recv_exact(4) if b1 & 0x80 else None
            data = self._recv_exact(n)
            if mask:
                data = bytes(b ^ mask[i % 4] for i, b in enumerate(data))
            if opcode == 0x8:
                raise OpenEnvError("serve-env closed the session")
            if opcode == 0x9:
                self._send(0xA, data)
                continue
            if opcode in (0x1, 0x0, 0x2):
                parts.append(data)
                if b0 & 0x80:
                    return b"".join(parts).decode("utf-8")

    def call(self, msg: dict[str, Any]) -> dict[str, Any]:
        self._send(0x1, json.dumps(msg).encode("utf-8"))
        reply = json.loads(self._recv_text())
        if reply.get("type") == "error":
            data = reply.get("data") or {}
            raise OpenEnvError(f"serve-env: {data.get('code')}: {data.get('message')}")
        data: dict[str, Any] = reply.get("data") or {}
        return data

    def reset(self, **data: Any) -> dict[str, Any]:
        return self.call({"type": "reset", "data": data})

    def step(self, message: str) -> dict[str, Any]:
        return self.call({"type": "step", "data": {"message": message}})

    def close(self) -> None:
        try:
            self._send(0x1, json.dumps({"type": "close"}).encode())
        except OSError:
            pass
        try:
            self.sock.close()
        except OSError:
            pass
