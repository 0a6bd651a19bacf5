"""The alert bus over ZeroMQ: the only package that imports ``zmq``.

- :mod:`pipeline.bus.wire`: the messages (topics, heartbeat, replay request and reply), JSON;
- :mod:`pipeline.bus.publisher`: :class:`AlertPublisher`, journal first, then PUB, heartbeats
  and the replay endpoint;
- :mod:`pipeline.bus.subscriber`: :class:`AlertSubscriber`, every alert once and in order;
- :mod:`pipeline.bus.keys`: CURVE keypairs and the subscribers' allow-list.
"""

from pipeline.bus.publisher import AlertPublisher, PublisherConfig
from pipeline.bus.subscriber import (
    AlertSubscriber,
    BusWarning,
    PublisherBack,
    PublisherSilent,
    SubscriberConfig,
)

__all__ = [
    "AlertPublisher",
    "AlertSubscriber",
    "BusWarning",
    "PublisherBack",
    "PublisherConfig",
    "PublisherSilent",
    "SubscriberConfig",
]
