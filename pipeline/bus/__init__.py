"""The alert bus over ZeroMQ: the only package that imports ``zmq``.

- :mod:`pipeline.bus.wire`: the messages (topics, heartbeat, replay request and reply), JSON;
- :mod:`pipeline.bus.store`: :class:`AlertStore`, the journal and its spill file: no alert is
  refused for a full disk or a locked journal;
- :mod:`pipeline.bus.publisher`: :class:`AlertPublisher`, journal first, then PUB, heartbeats,
  system notices and the replay endpoint;
- :mod:`pipeline.bus.subscriber`: :class:`AlertSubscriber`, every alert once and in order;
- :mod:`pipeline.bus.keys`: CURVE keypairs and the subscribers' allow-list.
"""

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
from pipeline.bus.wire import Notice

__all__ = [
    "AlertPublisher",
    "AlertStore",
    "AlertSubscriber",
    "BusWarning",
    "JournalChanged",
    "Notice",
    "PublisherBack",
    "PublisherConfig",
    "PublisherSilent",
    "SubscriberConfig",
]
