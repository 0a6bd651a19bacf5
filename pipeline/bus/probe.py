"""A hostile replay peer, for soaks and fault probes: it asks and never reads its replies.

The bus is the only package that imports ``zmq``, so the peer that tests the replay endpoint's
bounds lives here too (``scripts/soak.py`` runs it beside a live monitor).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

import zmq

FLOOD_PERIOD_S = 0.01  # a round of requests, one per peer, this often


@dataclass
class FloodCounts:
    sent: int = 0  # requests that left
    refused: int = 0  # requests the peer's own full queue refused (the endpoint reads no more)


def flood_replay(
    endpoint: str, requests: Sequence[bytes], stop: threading.Event, peers: int = 2
) -> FloodCounts:
    """Send ``requests`` in turn from ``peers`` sockets that never read, until ``stop``."""
    counts = FloodCounts()
    context = zmq.Context()
    sockets = [context.socket(zmq.DEALER) for _ in range(peers)]
    try:
        for socket in sockets:
            socket.rcvhwm, socket.rcvbuf, socket.linger = 1, 4096, 0
            socket.connect(endpoint)
        while not stop.wait(FLOOD_PERIOD_S):
            for socket in sockets:
                try:
                    socket.send_multipart([b"", requests[counts.sent % len(requests)]], zmq.NOBLOCK)
                    counts.sent += 1
                except zmq.Again:
                    counts.refused += 1
    finally:
        context.destroy(linger=0)
    return counts
