"""Read-ahead: a file or folder source read by a worker thread ahead of its consumer
(:class:`ReadAhead`)."""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from dataclasses import dataclass

from pipeline.live.sources.base import Gap, Source
from vision.types import Frame


class ReadAhead:
    """A file or folder source read by a worker thread up to ``depth`` items ahead of its
    consumer, so that decoding the next frames overlaps the work on this one (PyAV, OpenCV and
    NumPy let go of the GIL while they work). The items, their order and the errors raised are
    the source's own; a live source gains nothing (it already runs at its own pace).
    ``close()`` (any thread) stops the worker and closes the source."""

    def __init__(self, source: Source, depth: int = 4) -> None:
        if depth < 1:
            raise ValueError(f"depth must be at least 1, not {depth}")
        self.source, self._depth = source, depth
        self._stop = threading.Event()
        self._worker: threading.Thread | None = None

    def __getattr__(self, name: str):  # fps, size_wh, live, duration_s ... of the source
        return getattr(self.source, name)

    def __iter__(self) -> Iterator[Frame | Gap]:
        if self._worker is not None:
            raise RuntimeError("a source can be read once")
        items: queue.Queue = queue.Queue(self._depth)
        self._worker = threading.Thread(target=self._read, args=(items,), daemon=True)
        self._worker.start()
        return self._take(items)

    def _read(self, items: queue.Queue) -> None:
        try:
            for item in self.source:
                if not self._put(items, item):
                    return
        except BaseException as exc:  # handed to the consumer, raised there
            self._put(items, _Failed(exc))
            return
        self._put(items, _END)

    def _put(self, items: queue.Queue, item) -> bool:
        """Queue ``item`` once there is room; False when stopped first."""
        while not self._stop.is_set():
            try:
                items.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def _take(self, items: queue.Queue) -> Iterator[Frame | Gap]:
        try:
            while not self._stop.is_set():
                try:
                    item = items.get(timeout=0.1)
                except queue.Empty:
                    continue
                if item is _END:
                    return
                if isinstance(item, _Failed):
                    raise item.error
                yield item
        finally:
            self.close()

    def close(self) -> None:
        self._stop.set()
        self.source.close()
        worker = self._worker
        if worker is not None and worker is not threading.current_thread():
            worker.join()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


@dataclass(frozen=True)
class _Failed:
    error: BaseException


_END = object()  # the worker's last item: the source has no more
