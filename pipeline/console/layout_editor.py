"""The console's layout editor: a page to place a camera's zones over its picture, and its API.

:func:`layout_routes` gives the routes a console app mounts (behind its login):

- ``GET /layout``: the page (static/layout.html, layout.js, layout.css under ``/layout/assets/``);
  ``/layout?open=NAME`` opens a saved layout at once.
- ``GET /api/layout/template``: the template (the packaged default layout, table mm: its four
  corners, zones) the page fits by four clicks.
- ``POST /api/layout/fit`` ``{"corners_px": [[u, v] x 4]}``: the template placed on the picture
  (a draft: zones in image px, see :mod:`pipeline.console.layout_store`); with ``"draft": DRAFT``
  that draft is carried to the new corners instead, its hand-dragged points with it.
- ``POST /api/layout/frame`` ``{"source": PATH_OR_URL}``: the first frame of a video file, image
  folder, stream or camera, as ``image/jpeg``.
- ``POST /api/layout/frame/upload`` (multipart, field ``picture``): an uploaded picture, decoded
  by OpenCV, as ``image/jpeg`` (at most ``MAX_UPLOAD_BYTES``).
- ``GET /api/layout/layouts``: ``{"folder": DIR, "layouts": [NAME, ...]}``.
- ``GET /api/layout/layouts/NAME``: the saved layout as a draft.
- ``PUT /api/layout/layouts/NAME`` ``{"draft": DRAFT, "overwrite": bool}``: validated by
  :func:`pipeline.layout.parse_layout`, written to ``DIR/NAME.yaml``; an existing one only with
  ``overwrite`` (else 409).

Errors are ``{"error": ONE_LINE}`` with status 400 (bad input), 404 (no such layout), 409 (exists)
or 413 (upload too large). Blocking work runs in Starlette's thread pool.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.formparsers import MultiPartException
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import Message

from pipeline.console.layout_frames import (
    MAX_UPLOAD_BYTES,
    FrameError,
    frame_from_source,
    frame_from_upload,
    jpeg_bytes,
)
from pipeline.console.layout_store import (
    LayoutExists,
    LayoutFolder,
    LayoutMissing,
    LayoutStoreError,
    Template,
    fit_template,
    load_template,
    move_draft,
)

STATIC_DIR = Path(__file__).resolve().parent / "static"
ASSETS = {"layout.js": "text/javascript", "layout.css": "text/css"}
MAX_JSON_BYTES = 1 << 20  # a draft is tens of kilobytes; a bigger body is no draft
UPLOAD_FIELD = "picture"


class _TooLarge(ValueError):
    """A request body past its cap."""


def error(message: str, status: int = 400) -> JSONResponse:
    """The API's error answer: one line, as JSON."""
    return JSONResponse({"error": message}, status_code=status)


def layout_routes(layouts_dir: Path) -> list[BaseRoute]:
    """The layout editor's routes, saving to and opening from ``layouts_dir`` (made when the
    first layout is saved)."""
    editor = _Editor(LayoutFolder(Path(layouts_dir)))
    return [
        Route("/layout", editor.page, methods=["GET"]),
        Route("/layout/assets/{name}", editor.asset, methods=["GET"]),
        Route("/api/layout/template", editor.template, methods=["GET"]),
        Route("/api/layout/fit", editor.fit, methods=["POST"]),
        Route("/api/layout/frame", editor.frame, methods=["POST"]),
        Route("/api/layout/frame/upload", editor.upload, methods=["POST"]),
        Route("/api/layout/layouts", editor.listing, methods=["GET"]),
        Route("/api/layout/layouts/{name}", editor.read, methods=["GET"]),
        Route("/api/layout/layouts/{name}", editor.save, methods=["PUT"]),
    ]


class _Editor:
    """The handlers, sharing the layouts folder and the template (read once, on first use)."""

    def __init__(self, folder: LayoutFolder) -> None:
        self._folder = folder
        self._template: Template | None = None

    def _template_once(self) -> Template:
        if self._template is None:
            self._template = load_template()
        return self._template

    async def page(self, request: Request) -> Response:
        return FileResponse(STATIC_DIR / "layout.html", media_type="text/html")

    async def asset(self, request: Request) -> Response:
        name = request.path_params["name"]
        if name not in ASSETS:
            return error(f"no asset '{name[:80]}'", 404)
        return FileResponse(STATIC_DIR / name, media_type=ASSETS[name])

    async def template(self, request: Request) -> Response:
        template = await run_in_threadpool(self._template_once)
        return JSONResponse(template.as_json())

    async def fit(self, request: Request) -> Response:
        body = await _json_body(request)
        if isinstance(body, Response):
            return body
        template = await run_in_threadpool(self._template_once)
        corners, draft = body.get("corners_px"), body.get("draft")
        try:
            placed = (
                fit_template(template, corners) if draft is None else move_draft(draft, corners)
            )
        except LayoutStoreError as err:
            return error(str(err))
        return JSONResponse(placed)

    async def frame(self, request: Request) -> Response:
        body = await _json_body(request)
        if isinstance(body, Response):
            return body
        source = body.get("source")
        if not isinstance(source, str):
            return error("source: type a video file's path or a stream URL")
        return await _picture(lambda: frame_from_source(source))

    async def upload(self, request: Request) -> Response:
        try:
            form = await Request(request.scope, _capped(request.receive, MAX_UPLOAD_BYTES)).form(
                max_files=1, max_fields=1
            )
        except _TooLarge:
            return error(f"the upload is larger than {MAX_UPLOAD_BYTES >> 20} MiB", 413)
        except (HTTPException, MultiPartException, ValueError) as err:  # a malformed form
            why = err.detail if isinstance(err, HTTPException) else str(err)
            return error(f"not a picture upload (a multipart form): {why[:120]}")
        part = form.get(UPLOAD_FIELD)
        if part is None or isinstance(part, str):
            return error(f"the upload has no file field '{UPLOAD_FIELD}'")
        data = await part.read()
        await form.close()
        return await _picture(lambda: frame_from_upload(data))

    async def listing(self, request: Request) -> Response:
        names = await run_in_threadpool(self._folder.names)
        return JSONResponse({"folder": str(self._folder.root), "layouts": names})

    async def read(self, request: Request) -> Response:
        name = request.path_params["name"]
        return await _answer(lambda: self._folder.read(name))

    async def save(self, request: Request) -> Response:
        name = request.path_params["name"]
        body = await _json_body(request)
        if isinstance(body, Response):
            return body
        overwrite = body.get("overwrite") is True

        def write() -> dict[str, Any]:
            path = self._folder.write(name, body.get("draft"), overwrite)
            return {"name": name, "path": str(path)}

        return await _answer(write)


async def _answer(work: Callable[[], dict[str, Any]]) -> Response:
    """``work()`` in the thread pool, as JSON; its store errors as their status."""
    try:
        return JSONResponse(await run_in_threadpool(work))
    except LayoutMissing as err:
        return error(str(err), 404)
    except LayoutExists as err:
        return error(str(err), 409)
    except LayoutStoreError as err:
        return error(str(err))


async def _picture(decode: Callable[[], Any]) -> Response:
    """``decode()`` (a BGR picture) in the thread pool, answered as JPEG with its size."""
    try:
        image = await run_in_threadpool(decode)
        data = await run_in_threadpool(jpeg_bytes, image)
    except FrameError as err:
        return error(str(err))
    height, width = image.shape[:2]
    headers = {"X-Image-Size": f"{width}x{height}", "Cache-Control": "no-store"}
    return Response(data, media_type="image/jpeg", headers=headers)


async def _json_body(request: Request) -> dict[str, Any] | Response:
    """The request's JSON object, or the error answer (too large, not JSON, not an object)."""
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_JSON_BYTES:
            return error(f"the request is larger than {MAX_JSON_BYTES >> 10} KiB", 413)
        chunks.append(chunk)
    try:
        body = json.loads(b"".join(chunks) or b"null")
    except (UnicodeDecodeError, json.JSONDecodeError):
        return error("the request is not JSON")
    if not isinstance(body, dict):
        return error("the request must be a JSON object")
    return body


def _capped(receive: Callable[[], Awaitable[Message]], limit: int):
    """``receive`` that raises :class:`_TooLarge` once the body passes ``limit`` bytes (the
    multipart parser spools files without a cap of its own)."""
    seen = 0

    async def capped() -> Message:
        nonlocal seen
        message = await receive()
        seen += len(message.get("body", b""))
        if seen > limit:
            raise _TooLarge(f"body past {limit} bytes")
        return message

    return capped
