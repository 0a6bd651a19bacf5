"""Operators and the login: scrypt hashes in a small YAML file, a signed session cookie.

The operators file::

    operators:
      alice: {password: "scrypt$16384$8$1$<salt b64>$<hash b64>"}

is written by ``paigow console operator add NAME --operators FILE`` (:func:`add_operator`).
The login form posts to ``/login``; a good name and password put the operator's name in the
session (Starlette's signed cookie, its secret kept in the console's store). :class:`RequireLogin`
stands in front of every page and API: a page without a session is sent to ``/login``, an API
call gets 401.

>>> stored = hash_password("s3cret")
>>> verify_password("s3cret", stored), verify_password("guess", stored)
(True, False)
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
from pathlib import Path
from typing import Any
from urllib.parse import quote

import yaml
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

SCRYPT_N = 2**14
"""scrypt's cost: ~20 ms and 16 MiB per hash. Higher: slower guessing of a stolen file, and
slower logins."""
SCRYPT_R = 8
SCRYPT_P = 1
SALT_BYTES = 16
MAX_SCRYPT_N = 2**20
"""Largest cost taken from a file: a hash asking for more is refused, not computed (it would
take a gigabyte and seconds per login)."""
OPEN_PATHS = ("/login", "/static/console.css", "/static/login.js")
"""What is served without a session: the login page and what it loads."""
STATIC = Path(__file__).parent / "static"


def hash_password(password: str) -> str:
    """``scrypt$n$r$p$salt_b64$hash_b64`` of ``password`` with a fresh random salt."""
    salt = os.urandom(SALT_BYTES)
    digest = _scrypt(password, salt, SCRYPT_N, SCRYPT_R, SCRYPT_P)
    b64 = base64.b64encode
    return f"scrypt${SCRYPT_N}${SCRYPT_R}${SCRYPT_P}${b64(salt).decode()}${b64(digest).decode()}"


def _scrypt(password: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    memory = 128 * r * (n + p + 2)
    return hashlib.scrypt(password.encode(), salt=salt, n=n, r=r, p=p, maxmem=2 * memory)


def verify_password(password: str, stored: str) -> bool:
    """Whether ``password`` matches ``stored`` (False for a malformed hash)."""
    try:
        scheme, n, r, p, salt, digest = stored.split("$")
        if scheme != "scrypt":
            return False
        expected = base64.b64decode(digest, validate=True)
        if int(n) * int(r) * int(p) > MAX_SCRYPT_N * SCRYPT_R:
            return False
        got = _scrypt(password, base64.b64decode(salt, validate=True), int(n), int(r), int(p))
    except ValueError:  # a bad field, bad base64, or parameters scrypt refuses
        return False
    return hmac.compare_digest(got, expected)


def load_operators(path: Path) -> dict[str, str]:
    """Operator name -> password hash; ValueError with one line for a file that is not one."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) if path.exists() else None
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ValueError(f"{path}: cannot read the operators file: {exc}") from None
    if data is None and not path.exists():
        raise ValueError(f"{path}: no such operators file (paigow console operator add ...)")
    operators = (data or {}).get("operators") if isinstance(data, dict | None) else None
    if not isinstance(operators, dict) or not operators:
        raise ValueError(f"{path}: expected 'operators: {{NAME: {{password: HASH}}}}'")
    found = {}
    for name, entry in operators.items():
        password = entry.get("password") if isinstance(entry, dict) else None
        if not isinstance(password, str) or not password.startswith("scrypt$"):
            raise ValueError(f"{path}: operator {name!r} has no scrypt password hash")
        found[str(name)] = password
    return found


def add_operator(path: Path, name: str, password: str) -> None:
    """Add (or replace) one operator in the file, made if absent; other entries are kept."""
    if not name or not name.replace("_", "").replace("-", "").replace(".", "").isalnum():
        raise ValueError(f"operator name {name!r}: use letters, digits, '.', '_' and '-'")
    if not password:
        raise ValueError("an empty password is refused")
    operators: dict[str, Any] = {}
    if path.exists():
        operators = {n: {"password": h} for n, h in load_operators(path).items()}
    operators[name] = {"password": hash_password(password)}
    text = yaml.safe_dump({"operators": operators}, sort_keys=True)
    try:
        path.write_text(text, encoding="utf-8")
        path.chmod(0o600)
    except OSError as exc:
        raise ValueError(f"{path}: cannot write the operators file: {exc}") from None


class RequireLogin:
    """ASGI middleware (inside Starlette's SessionMiddleware): lets a request through when its
    session names an operator, or it asks for one of :data:`OPEN_PATHS`."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        if scope.get("session", {}).get("operator"):
            await self.app(scope, receive, send)
            return
        response: Response
        if scope["path"].startswith("/api/"):
            response = JSONResponse({"error": "log in first"}, status_code=401)
        else:
            response = RedirectResponse(f"/login?next={quote(scope['path'])}", status_code=303)
        await response(scope, receive, send)


def login_routes(operators: dict[str, str]) -> list[tuple[str, Any, list[str]]]:
    """(path, endpoint, methods) of the login page, its form's target and the logout."""
    decoy = hash_password(os.urandom(8).hex())

    async def login_page(request: Request) -> Response:
        return FileResponse(STATIC / "login.html")

    async def login(request: Request) -> Response:
        form = await request.form()
        name, password = str(form.get("operator", "")), str(form.get("password", ""))
        stored = operators.get(name, decoy)  # an unknown name costs a hash too: no timing hint
        good = await run_in_threadpool(verify_password, password, stored)  # ~20 ms of CPU
        target = _local(str(form.get("next", "/")))
        if name not in operators or not good:
            return RedirectResponse(f"/login?failed=1&next={quote(target)}", status_code=303)
        request.session.clear()
        request.session["operator"] = name
        return RedirectResponse(target, status_code=303)

    async def logout(request: Request) -> Response:
        request.session.clear()
        return RedirectResponse("/login", status_code=303)

    return [
        ("/login", login_page, ["GET"]),
        ("/login", login, ["POST"]),
        ("/logout", logout, ["POST"]),
    ]


def _local(target: str) -> str:
    """``target`` if it is a path of this site, else ``/`` (no open redirect)."""
    if target.startswith("/") and not target.startswith("//") and "\\" not in target:
        return target
    return "/"
