"""Where the bus listens unless told otherwise, in one place.

Plain constants, no ``zmq``: the command line builds its parsers from them (``paigow --help``
loads no transport), and the publisher and subscriber default to them.
"""

PUB_ENDPOINT = "tcp://127.0.0.1:5556"
"""The publisher's PUB socket: alerts, heartbeats and system notices."""
REPLAY_ENDPOINT = "tcp://127.0.0.1:5557"
"""The publisher's replay endpoint (ROUTER): missed alerts fetched again from the journal."""

PROXY_PUB_ENDPOINT = "tcp://127.0.0.1:5550"
"""The room proxy's XPUB socket: every table's alerts, heartbeats and notices, for consoles.
Apart from the monitor's defaults, so that a proxy and a monitor can run on one machine."""
PROXY_REPLAY_ENDPOINT = "tcp://127.0.0.1:5551"
"""The room proxy's replay endpoint (ROUTER): a request is sent on to its table's own."""
