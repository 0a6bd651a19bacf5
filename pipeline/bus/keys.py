"""CURVE keys for the bus: a keys directory, the publisher's keypair and an allow-list.

Layout of a keys directory (pyzmq certificate files, keys in Z85)::

    DIR/server.key, DIR/server.key_secret   the publisher's keypair (give server.key out)
    DIR/NAME.key,   DIR/NAME.key_secret     a subscriber's keypair
    DIR/allowed/NAME.key                    the allow-list: subscribers that may connect

``paigow keys new --dir DIR`` makes the server pair; ``--name NAME`` makes a subscriber pair and
puts its public key on the allow-list (delete ``allowed/NAME.key`` to revoke it; the publisher
reads the list when it starts). A subscriber elsewhere needs ``server.key`` and its own pair.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import zmq
from zmq.auth import create_certificates, load_certificate
from zmq.auth.thread import ThreadAuthenticator

SERVER_NAME = "server"
ALLOWED_DIR = "allowed"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")


@dataclass(frozen=True, slots=True)
class ServerCurve:
    """What the publisher needs: its keypair (Z85) and the allow-list directory."""

    public_key: bytes
    secret_key: bytes
    allowed_dir: Path


@dataclass(frozen=True, slots=True)
class ClientCurve:
    """What a subscriber needs: its own keypair and the publisher's public key (Z85)."""

    public_key: bytes
    secret_key: bytes
    server_key: bytes


def new_keys(keys_dir: str | Path, name: str = SERVER_NAME) -> Path:
    """Create the keypair ``name`` in ``keys_dir`` (made if absent); return its public key file.

    A name other than ``server`` is a subscriber, put on the allow-list. ValueError for a bad
    name or a pair that already exists (keys are never overwritten).
    """
    if not _NAME.fullmatch(name):
        raise ValueError(f"key name {name!r}: use letters, digits, '_' and '-'")
    keys_dir = Path(keys_dir)
    allowed = keys_dir / ALLOWED_DIR
    allowed.mkdir(parents=True, exist_ok=True)
    public, secret = keys_dir / f"{name}.key", keys_dir / f"{name}.key_secret"
    if public.exists() or secret.exists():
        raise ValueError(f"{public}: a key named {name!r} exists already")
    previous = os.umask(0o077)  # the secret file is never readable by others, not for a moment
    try:
        create_certificates(keys_dir, name)
    finally:
        os.umask(previous)
    os.chmod(public, 0o644)
    if name != SERVER_NAME:
        shutil.copyfile(public, allowed / public.name)
    return public


def _read(path: Path) -> tuple[bytes, bytes | None]:
    try:
        return load_certificate(path)
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: cannot read the key: {exc} {_hint(path)}") from None


def _hint(path: Path) -> str:
    return f"(create it with: paigow keys new --dir {path.parent} --name {path.stem})"


def _read_pair(path: Path) -> tuple[bytes, bytes]:
    public, secret = _read(path)
    if secret is None:
        raise ValueError(f"{path}: no secret key in the file {_hint(path)}")
    return public, secret


def server_curve(keys_dir: str | Path) -> ServerCurve:
    """The publisher's keys from ``keys_dir``; ValueError naming a missing file or directory."""
    keys_dir = Path(keys_dir)
    public, secret = _read_pair(keys_dir / f"{SERVER_NAME}.key_secret")
    allowed = keys_dir / ALLOWED_DIR
    if not allowed.is_dir():
        raise ValueError(f"{allowed}: no allow-list directory")
    return ServerCurve(public, secret, allowed)


def client_curve(keys_dir: str | Path, name: str) -> ClientCurve:
    """Subscriber ``name``'s keys and the publisher's public key, from ``keys_dir``."""
    keys_dir = Path(keys_dir)
    public, secret = _read_pair(keys_dir / f"{name}.key_secret")
    server, _ = _read(keys_dir / f"{SERVER_NAME}.key")
    return ClientCurve(public, secret, server)


def start_authenticator(context: zmq.Context, curve: ServerCurve) -> ThreadAuthenticator:
    """Start ZAP for ``context``: CURVE clients are let in only if their key is allowed.

    Start it before binding any CURVE server socket (without a ZAP handler libzmq lets every
    client in). One per context; call ``stop()`` on it after closing the server sockets.
    """
    auth = ThreadAuthenticator(context)
    auth.start()
    auth.configure_curve(domain="*", location=str(curve.allowed_dir))
    return auth


def secure_server(socket: zmq.Socket, curve: ServerCurve) -> None:
    """Make ``socket`` a CURVE server; call before ``bind``."""
    socket.curve_secretkey = curve.secret_key
    socket.curve_publickey = curve.public_key
    socket.curve_server = True


def secure_client(socket: zmq.Socket, curve: ClientCurve) -> None:
    """Make ``socket`` a CURVE client of the publisher; call before ``connect``."""
    socket.curve_secretkey = curve.secret_key
    socket.curve_publickey = curve.public_key
    socket.curve_serverkey = curve.server_key
