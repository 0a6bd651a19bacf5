"""Where the bus listens unless told otherwise, in one place.

Plain constants, no ``zmq``: the command line builds its parsers from them (``paigow --help``
loads no transport), and the publisher and subscriber default to them.
"""

PUB_ENDPOINT = "tcp://127.0.0.1:5556"
"""The publisher's PUB socket: alerts, heartbeats and system notices."""
REPLAY_ENDPOINT = "tcp://127.0.0.1:5557"
"""The publisher's replay endpoint (ROUTER): missed alerts fetched again from the journal."""
