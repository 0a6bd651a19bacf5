"""Events from the console's threads to every connected page.

Each page holds one server-sent event stream (``/api/events``); the stream registers a bounded
queue with the :class:`Hub`. :meth:`Hub.publish` may be called from any thread: it hands the
event to each stream's event loop with ``call_soon_threadsafe``. A page that does not read its
stream fast enough loses events, and is sent ``{"type": "reload"}`` instead, which makes it
fetch the wall afresh (events only say *what changed*, the page reads the rest from the API).

Events: ``{"type": "wall", "ids": [...]}`` (irregularities changed: new alerts or an
acknowledgement), ``{"type": "health", "tables": [...]}``, ``{"type": "reload"}``.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

QUEUE_EVENTS = 64
"""Events queued per page before it is told to reload instead. Higher: fewer reloads of a
slow page during a burst; lower: less memory per page."""

Event = dict[str, Any]
CLOSED: Event = {"type": "closed"}
"""Put in each queue by :meth:`Hub.close`: the stream ends."""


class _Stream:
    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.queue: asyncio.Queue[Event] = asyncio.Queue(QUEUE_EVENTS)
        self.overflowed = False

    def offer(self, event: Event) -> None:
        """Runs in the stream's loop: queue the event; when the queue is full, replace all
        that is queued by one reload (and drop what follows until the page has read it)."""
        if self.overflowed and event is not CLOSED:
            return
        if self.queue.full():
            self.overflowed = True
            while not self.queue.empty():
                self.queue.get_nowait()
            event = CLOSED if event is CLOSED else {"type": "reload"}
        self.queue.put_nowait(event)

    async def next(self) -> Event:
        event = await self.queue.get()
        if event.get("type") == "reload":
            self.overflowed = False
        return event


class Hub:
    """Who listens (one stream per connected page) and how to reach them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._streams: set[_Stream] = set()
        self._closed = False

    def open(self) -> _Stream:
        """A stream for the calling coroutine's loop (call from the event loop)."""
        stream = _Stream(asyncio.get_running_loop())
        with self._lock:
            self._streams.add(stream)
            if self._closed:
                stream.offer(CLOSED)
        return stream

    def drop(self, stream: _Stream) -> None:
        with self._lock:
            self._streams.discard(stream)

    def publish(self, event: Event) -> None:
        """Send ``event`` to every page; from any thread, never blocks."""
        with self._lock:
            streams = list(self._streams)
        for stream in streams:
            try:
                stream.loop.call_soon_threadsafe(stream.offer, event)
            except RuntimeError:  # its loop is closed: the server is stopping
                self.drop(stream)

    @property
    def listeners(self) -> int:
        with self._lock:
            return len(self._streams)

    def close(self) -> None:
        """End every stream (the server is stopping)."""
        with self._lock:
            self._closed = True
        self.publish(CLOSED)
