"""The alert bus over ZeroMQ: the only package that imports ``zmq``.

- :mod:`pipeline.bus.endpoints`: the default endpoints (no ``zmq``);
- :mod:`pipeline.bus.wire`: the messages (topics, heartbeat, replay request and reply), JSON;
- :mod:`pipeline.bus.store`: :class:`AlertStore`, the journal and its spill file: no alert is
  refused for a full disk or a locked journal;
- :mod:`pipeline.bus.publisher`: :class:`AlertPublisher`, journal first, then PUB, heartbeats,
  system notices and the replay endpoint;
- :mod:`pipeline.bus.subscriber`: :class:`AlertSubscriber`, every alert once and in order;
- :mod:`pipeline.bus.keys`: CURVE keypairs and the subscribers' allow-list;
- :mod:`pipeline.bus.proxy`: :class:`RoomProxy`, one publish and one replay address for many
  tables' publishers (its replay router: :mod:`pipeline.bus.router`).

The names below are loaded on first use, so that importing :mod:`pipeline.bus.endpoints` (the
command line does, to build its parsers) loads neither ``zmq`` nor the journal.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pipeline.bus.proxy import ProxyConfig, ProxyCurve, RoomProxy, run_proxy
    from pipeline.bus.publisher import AlertPublisher, PublisherConfig
    from pipeline.bus.store import AlertStore
    from pipeline.bus.subscriber import (
        AlertSubscriber,
        BusWarning,
        JournalChanged,
        PublisherBack,
        PublisherSilent,
        SubscriberConfig,
    )
    from pipeline.bus.wire import Heartbeat, Notice

_HOMES = {
    "AlertPublisher": "publisher",
    "AlertStore": "store",
    "AlertSubscriber": "subscriber",
    "BusWarning": "subscriber",
    "Heartbeat": "wire",
    "JournalChanged": "subscriber",
    "Notice": "wire",
    "ProxyConfig": "proxy",
    "ProxyCurve": "proxy",
    "PublisherBack": "subscriber",
    "PublisherConfig": "publisher",
    "PublisherSilent": "subscriber",
    "RoomProxy": "proxy",
    "SubscriberConfig": "subscriber",
    "run_proxy": "proxy",
}
"""Each public name -> the module of this package that defines it."""

__all__ = [
    "AlertPublisher",
    "AlertStore",
    "AlertSubscriber",
    "BusWarning",
    "Heartbeat",
    "JournalChanged",
    "Notice",
    "ProxyConfig",
    "ProxyCurve",
    "PublisherBack",
    "PublisherConfig",
    "PublisherSilent",
    "RoomProxy",
    "SubscriberConfig",
    "run_proxy",
]


def __getattr__(name: str) -> object:
    """A public name, imported from its module on first use (PEP 562)."""
    home = _HOMES.get(name)
    if home is None:  # also how ``from pipeline.bus import keys`` finds a submodule
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)
