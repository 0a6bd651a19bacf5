"""Start or join a Ray instance, offline, and say in one line what went wrong.

``--ray auto`` starts a local instance sized to the machine (every core, unless ``num_cpus``
says fewer); any other value is the address of a running cluster (``ray://host:10001`` or
``host:6379``) whose workers have this package installed. Ray's dashboard and its usage
statistics (which would call out to the internet) are off, and what workers print stays in
Ray's own log files instead of interleaving with our progress bar.

>>> ray_address("auto") is None, ray_address("10.0.0.5:6379")
(True, '10.0.0.5:6379')
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType

AUTO = "auto"
INSTALL_HINT = "pip install -e '.[cluster]'"


class RayUnavailable(ValueError):
    """Ray is not installed, or the instance could not be started or joined (one line)."""


def ray_address(text: str) -> str | None:
    """None for ``auto`` (a local instance), else the address as given."""
    text = text.strip()
    if not text:
        raise ValueError("an empty Ray address: give 'auto' or HOST:PORT")
    return None if text == AUTO else text


def import_ray() -> ModuleType:
    """The ``ray`` module, or RayUnavailable naming the extra that installs it."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # never report to the internet
    os.environ.setdefault("RAY_DEDUP_LOGS", "0")
    try:
        import ray
    except ImportError:
        raise RayUnavailable(f"Ray is not installed ({INSTALL_HINT})") from None
    return ray


@contextmanager
def ray_instance(address: str = AUTO, num_cpus: int | None = None) -> Iterator[ModuleType]:
    """A started (``auto``) or joined Ray instance for the block, shut down after it; yields
    the ``ray`` module. RayUnavailable (one line) when it cannot be had."""
    ray = import_ray()
    where = ray_address(address)
    if where is not None:
        _check_answers(where)
    options: dict = {
        "include_dashboard": False,
        "log_to_driver": False,
        "logging_level": logging.WARNING,
    }
    if where is None:
        options["num_cpus"] = num_cpus or os.cpu_count() or 1
        # a local instance turns Ray's token authentication on by itself, and says so on
        # stderr at every start: a line that tells an operator nothing to do
        logging.getLogger("ray._private.authentication").setLevel(logging.ERROR)
    try:
        ray.init(address=where, **options)
    except Exception as exc:  # ConnectionError, RuntimeError, ValueError from Ray's init
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        at = "a local instance" if where is None else where
        raise RayUnavailable(f"Ray could not start {at}: {first[:300]}") from None
    try:
        yield ray
    finally:
        ray.shutdown()


def _check_answers(address: str, timeout_s: float = 5.0) -> None:
    """RayUnavailable at once when nothing answers at ``address`` (Ray itself would retry
    for minutes before it gives up)."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise RayUnavailable(f"Ray address {address!r}: give HOST:PORT or ray://HOST:PORT")
    try:
        socket.create_connection((host, int(port)), timeout=timeout_s).close()
    except OSError as exc:
        why = exc.strerror or exc
        raise RayUnavailable(f"no Ray cluster answers at {address}: {why}") from None


def cluster_cpus(ray: ModuleType) -> int:
    """CPUs the joined instance offers (at least 1)."""
    return max(1, int(ray.cluster_resources().get("CPU", 1)))
