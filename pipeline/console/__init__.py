"""``paigow console``: the surveillance room's console in the browser; the only package that
imports starlette, uvicorn and sse_starlette.

- :mod:`pipeline.console.config`: :class:`ConsoleConfig` (endpoints, HTTP bind, files) and its
  checks;
- :mod:`pipeline.console.auth`: operators (scrypt hashes in a YAML file), the login page, the
  guard in front of every page and API;
- :mod:`pipeline.console.health`: table health from the bus's items (pure);
- :mod:`pipeline.console.hub`: events from the feed's threads to every connected page (SSE);
- :mod:`pipeline.console.feed`: the bus thread (:class:`~pipeline.bus.AlertSubscriber`) and the
  store thread (:class:`~pipeline.journal.console.ConsoleStore`);
- :mod:`pipeline.console.api`: the JSON API under ``/api``;
- :mod:`pipeline.console.app`: :func:`~pipeline.console.app.build_app`, the Starlette app;
- :mod:`pipeline.console.server`: uvicorn, in the foreground (the command) or in a thread
  (:func:`~pipeline.console.server.serve_in_thread`, for the demo and the tests).

The pages are static files (``static/``): plain HTML, CSS and JavaScript, nothing fetched from
another host. Documentation: docs/console.md.
"""
