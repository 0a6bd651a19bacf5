"""The console's Starlette app: pages, static files, the API, the login in front of them.

Pages: ``/`` the wall (``/alert/ID`` opens one irregularity's detail on it), ``/audit`` the
acknowledgements of a shift, ``/login``, and, when the layout editor is installed,
``/layout``. Every response carries a Content-Security-Policy that lets the page load and call
nothing but this console: no request leaves the machine.
"""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.sessions import SessionMiddleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pipeline.console.api import Api
from pipeline.console.auth import STATIC, RequireLogin, load_operators, login_routes
from pipeline.console.config import ConsoleConfig
from pipeline.console.feed import Feed
from pipeline.console.hub import Hub
from pipeline.console.layout_editor import layout_routes
from pipeline.journal.console import ConsoleStore

LOOPBACK_HOSTS = ["127.0.0.1", "localhost"]
"""Host headers a console without login answers (against DNS rebinding); a console with a
login may sit behind a reverse proxy that sends its own name."""
SESSION_COOKIE = "paigow_console"
SESSION_MAX_AGE_S = 12 * 3600
"""A login lasts a shift. Longer: fewer logins; shorter: a forgotten browser is closed sooner."""
SECURITY_HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self';"
        b" connect-src 'self'; frame-ancestors 'none'; form-action 'self'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"cache-control", b"no-store"),
]


class SecurityHeaders:
    """ASGI middleware adding :data:`SECURITY_HEADERS` to every HTTP response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS]
            await send(message)

        await self.app(scope, receive, send_with_headers)


def page(name: str):
    async def serve(request: Request) -> Response:
        return FileResponse(STATIC / name, media_type="text/html")

    return serve


def build_app(config: ConsoleConfig, store: ConsoleStore, feed: Feed, hub: Hub) -> Starlette:
    """The app of one console; ``feed`` may be unstarted (tests of the API alone).

    ValueError with one line for an unreadable operators file (with a login)."""
    api = Api(config, store, feed, hub)
    routes: list[BaseRoute] = [
        Route("/", page("wall.html")),
        Route("/alert/{id:int}", page("wall.html")),
        Route("/audit", page("audit.html")),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
        *api.routes(),
        *layout_routes(config.layouts_dir),
    ]
    middleware = [Middleware(SecurityHeaders)]
    if config.no_login and config.host in LOOPBACK_HOSTS:
        # without a login, a page of another site whose name was rebound to 127.0.0.1 could
        # use the API; with one, its requests carry no session (the cookie is the console's)
        middleware.append(Middleware(TrustedHostMiddleware, allowed_hosts=LOOPBACK_HOSTS))
    if not config.no_login:
        operators = load_operators(config.operators_path) if config.operators_path else {}
        if not operators:
            raise ValueError("a console with a login needs --operators FILE")
        routes += [Route(p, e, methods=m) for p, e, m in login_routes(operators)]
        middleware += [
            Middleware(
                SessionMiddleware,
                secret_key=store.secret(),
                session_cookie=SESSION_COOKIE,
                max_age=SESSION_MAX_AGE_S,
                same_site="strict",
            ),
            Middleware(RequireLogin),
        ]
    return Starlette(routes=routes, middleware=middleware)
