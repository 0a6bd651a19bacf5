"""Binding the bus's listening sockets.

ZeroMQ closes a socket in its I/O thread, after ``close()`` returns: a monitor restarted in the
same process (or at once by its supervisor) may find its own old socket still holding the port
for a moment. A bind that finds the address in use is tried again for ``BIND_RETRY_S``; an
address another program holds still fails, with one clear line.
"""

from __future__ import annotations

import errno
import time

import zmq

BIND_RETRY_S = 2.0  # how long a port in use is waited for (our own socket being released)
BIND_RETRY_STEP_S = 0.05


def bind(socket: zmq.Socket, endpoint: str, retry_s: float = BIND_RETRY_S) -> None:
    """``socket.bind(endpoint)``; ValueError ("cannot bind ENDPOINT: why") when it cannot."""
    deadline = time.monotonic() + retry_s
    while True:
        try:
            socket.bind(endpoint)
            return
        except zmq.ZMQError as exc:
            if exc.errno != errno.EADDRINUSE or time.monotonic() >= deadline:
                raise ValueError(f"cannot bind {endpoint}: {exc}") from None
        time.sleep(BIND_RETRY_STEP_S)
