"""What one console needs to run: bus endpoints and keys, the HTTP bind, its files.

:func:`check_config` holds the rules that keep a console from being opened to the room's
network by mistake: a bind other than loopback needs an operators file, and ``no_login`` is
allowed on loopback only.

>>> parse_http("127.0.0.1:8080"), parse_http("[::1]:0")
(('127.0.0.1', 8080), ('::1', 0))
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from pathlib import Path

from pipeline.bus.endpoints import PUB_ENDPOINT, REPLAY_ENDPOINT

HTTP_DEFAULT = "127.0.0.1:8080"
LOOPBACK_NAMES = ("localhost",)


@dataclass(frozen=True, slots=True)
class ConsoleConfig:
    """One console: where it listens to the bus, where it serves, what it keeps where."""

    pub_endpoint: str = PUB_ENDPOINT
    replay_endpoint: str = REPLAY_ENDPOINT
    keys_dir: Path | None = None
    """CURVE keys directory (as ``paigow alerts --keys``); None: a plain bus."""
    key_name: str = "console"
    host: str = "127.0.0.1"
    port: int = 8080
    """0: any free port (the server's ``url`` says which)."""
    db_path: Path = Path("console.sqlite")
    operators_path: Path | None = None
    no_login: bool = False
    """Serve without a login (loopback only; ``paigow demo --console``)."""
    evidence_dirs: tuple[Path, ...] = ()
    """Folders a snapshot may be served from (an alert's ``evidence.snapshot`` is relative to
    its run's output folder); a snapshot elsewhere is "not on this machine"."""
    layouts_dir: Path = Path("layouts")
    silence_s: float = 3.0
    """A table (or the bus) not heard this long turns red. Lower: a dead monitor shows sooner;
    under the heartbeat period: false alarms."""
    page_size: int = 50
    """Irregularities per page of the wall."""
    operator_when_no_login: str = "console"
    """The operator name acknowledgements carry when there is no login."""


def parse_http(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[v6]:PORT`` for IPv6) -> (host, port); ValueError with one line."""
    host, sep, port_text = text.rpartition(":")
    if not sep or not host or not port_text.isdigit() or int(port_text) > 65535:
        raise ValueError(f"--http {text!r}: expected HOST:PORT, e.g. {HTTP_DEFAULT}")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host, int(port_text)


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_config(config: ConsoleConfig) -> None:
    """ValueError with one line for a console that must not start as configured."""
    loopback = is_loopback(config.host)
    if config.no_login and not loopback:
        raise ValueError(f"--no-login serves only on loopback, not on {config.host}")
    if not loopback and config.operators_path is None:
        raise ValueError(
            f"binding {config.host} opens the console to the network: give --operators FILE"
        )
    if not config.no_login and config.operators_path is None:
        raise ValueError("a console needs --operators FILE (or --no-login on loopback)")
    if config.evidence_dirs:
        missing = [str(d) for d in config.evidence_dirs if not d.is_dir()]
        if missing:
            raise ValueError(f"--evidence {missing[0]}: no such folder")
