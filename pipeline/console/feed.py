"""The console's feed: the bus, into the store, out to the pages.

Two threads, so that the bus is read while SQLite writes:

- ``console-bus`` iterates an :class:`~pipeline.bus.AlertSubscriber` (from each table's #1:
  the store drops what it has, so a restarted console misses nothing and doubles nothing) and
  puts every item on a queue (heartbeats too: they carry each table's status);
- ``console-store`` takes what is queued, up to :data:`BATCH_ITEMS` at a time: alerts into the
  :class:`~pipeline.journal.console.ConsoleStore` in one transaction, every item into the
  :class:`~pipeline.console.health.HealthBoard`, then tells the pages (:class:`Hub`) which
  irregularities changed, and, at least every :data:`HEALTH_PERIOD_S`, the tables' health.
"""

from __future__ import annotations

import queue
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from pipeline.alerts import Alert
from pipeline.bus import AlertSubscriber, SubscriberConfig
from pipeline.bus.keys import client_curve
from pipeline.bus.wire import Heartbeat
from pipeline.console.config import ConsoleConfig
from pipeline.console.health import CAMERA_LOST_KIND, HealthBoard
from pipeline.console.hub import Hub
from pipeline.journal.console import ConsoleStore

BATCH_ITEMS = 500
"""Most items written in one transaction. Higher: faster catch-up of a long journal; lower:
the pages hear of the first alerts of a burst sooner."""
HEALTH_PERIOD_S = 1.0
"""How often the pages get the tables' health (ages move on even when nothing is heard)."""
POLL_S = 0.2
"""Longest either thread waits before it looks at the stop flag."""
WALL_IDS_SENT = 100
"""An event names at most this many changed irregularities (past that, the page reloads)."""
_STOP = object()


def _about_health(item: object) -> bool:
    """Whether the item changes a table's health at once (a notice, a silence, a lost
    camera); heartbeats are shown at the next :data:`HEALTH_PERIOD_S`."""
    if isinstance(item, Alert):
        return item.kind == CAMERA_LOST_KIND
    return not isinstance(item, Heartbeat)


class Feed:
    """The two threads; :meth:`start`, :meth:`stop`. :meth:`health` from any thread.

    The subscriber is made by :meth:`start` in the caller's thread, so a bad endpoint or key is
    a ValueError there; it is then used by the bus thread only."""

    def __init__(
        self,
        config: ConsoleConfig,
        store: ConsoleStore,
        hub: Hub,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._config = config
        self._store = store
        self._hub = hub
        self._clock = clock
        self._board = HealthBoard(config.silence_s)
        self._board_lock = threading.Lock()
        self._items: queue.Queue[Any] = queue.Queue()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def start(self) -> None:
        config = self._config
        curve = client_curve(config.keys_dir, config.key_name) if config.keys_dir else None
        subscriber_config = SubscriberConfig(
            pub_endpoint=config.pub_endpoint,
            replay_endpoint=config.replay_endpoint,
            silence_s=config.silence_s,
            heartbeats=True,
        )
        subscriber = AlertSubscriber(subscriber_config, curve)
        self._threads = [
            threading.Thread(target=self._read_bus, args=(subscriber,), name="console-bus"),
            threading.Thread(target=self._write_store, name="console-store"),
        ]
        for thread in self._threads:
            thread.daemon = True
            thread.start()

    def _read_bus(self, subscriber: AlertSubscriber) -> None:
        try:
            with subscriber:
                while not self._stop.is_set():
                    for item in subscriber.items(timeout_s=POLL_S):
                        self._items.put(item)
        except Exception as exc:  # a bug or a ZeroMQ fault: said, not swallowed
            print(f"paigow console: the bus thread stopped: {exc!r}", file=sys.stderr)
            raise
        finally:
            self._items.put(_STOP)

    def _write_store(self) -> None:
        health_due = 0.0
        while True:
            items = self._take()
            if _STOP in items:
                return
            now = self._clock()
            with self._board_lock:
                for item in items:
                    self._board.observe(item, now)
            alerts = [item for item in items if isinstance(item, Alert)]
            if alerts:
                self._store_alerts(alerts)
            if now >= health_due or any(_about_health(item) for item in items):
                self._hub.publish({"type": "health", **self.health()})
                health_due = now + HEALTH_PERIOD_S

    def _take(self) -> list[Any]:
        try:
            items = [self._items.get(timeout=POLL_S)]
        except queue.Empty:
            return [_STOP] if self._stop.is_set() else []
        while len(items) < BATCH_ITEMS:
            try:
                items.append(self._items.get_nowait())
            except queue.Empty:
                break
        return items

    def _store_alerts(self, alerts: list[Alert]) -> None:
        try:
            changed = self._store.add(alerts)
        except Exception as exc:  # a full disk: the alerts come back from the bus next start
            print(f"paigow console: cannot store {len(alerts)} alert(s): {exc}", file=sys.stderr)
            return
        if changed:
            ids = changed[-WALL_IDS_SENT:] if len(changed) <= WALL_IDS_SENT else []
            self._hub.publish({"type": "wall", "ids": ids, "count": len(changed)})

    def health(self) -> dict[str, Any]:
        """``{"bus_silent": bool, "tables": [...]}`` (see :meth:`HealthBoard.snapshot`)."""
        with self._board_lock:
            tables = self._board.snapshot(self._clock())
            return {"bus_silent": self._board.bus_silent, "tables": tables}

    def stop(self, timeout_s: float = 5.0) -> None:
        """Stop both threads (within about :data:`POLL_S`); the subscriber is closed."""
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout_s)
