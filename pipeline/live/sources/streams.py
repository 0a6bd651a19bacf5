"""Live sources that reconnect with back-off after a failure (``_LiveSource``): a network
stream through PyAV (:class:`StreamSource`) and a local camera through OpenCV
(:class:`CameraSource`)."""

from __future__ import annotations

import sys
import time
from collections.abc import Generator, Iterator
from dataclasses import replace
from pathlib import Path

import av
import numpy as np

from pipeline.live.sources.base import (
    DEFAULT_FPS,
    Gap,
    SourceConfig,
    SourceError,
    _Source,
    _Timeline,
    _why,
)
from pipeline.live.sources.decoder import _Decoder
from vision.types import Frame


class _Down(Exception):
    """A live source stopped giving pictures; the message says why."""


class _LiveSource(_Source):
    """A stream or camera: reconnects with back-off after a failure (see the module doc).
    Subclasses give ``_connect()`` (raising :class:`_Down`), ``_images()`` (None for an
    unusable picture; any exception means the source is down) and ``_disconnect()``."""

    native_live = True
    finite = False  # ends for good at the end of its data (an HTTP file of known length)

    def __init__(self, name: str, config: SourceConfig) -> None:
        super().__init__(name, config)
        try:
            self._connect()
        except _Down as exc:
            raise SourceError(f"{name}: {exc}") from None
        self._origin = time.monotonic()

    def _now_s(self) -> float:
        return time.monotonic() - self._origin

    def _items(self) -> Iterator[Frame | Gap]:
        timeline = _Timeline(self.fps, self.config.min_gap_s)
        gap: Gap | None = None
        while not self._closing.is_set():
            last_s = self._now_s()
            try:
                for image in self._images():
                    now_s = self._now_s()
                    if image is None:
                        if now_s - last_s > self.config.read_timeout_s:
                            raise _Down(f"no usable picture for {self.config.read_timeout_s:g} s")
                        continue
                    if gap is not None:
                        yield replace(gap, end_s=now_s)
                        gap = None
                    yield Frame(self.config.camera_id, timeline.advance(now_s), now_s, image)
                    last_s = now_s
                if self.finite:
                    return
                reason = "the stream ended"
            except Exception as exc:  # a live source never raises once open: any failure is an
                reason = self._failure(exc)  # outage, reported as a gap while reconnecting
            self._disconnect()
            if gap is None:
                start_s = min(timeline.expected_s, self._now_s())
                gap = Gap(timeline.next_index, start_s, None, f"{self.name} lost: {reason}")
            yield gap
            if not (yield from self._reconnect(gap)):
                return

    def _reconnect(self, gap: Gap) -> Generator[Gap, None, bool]:
        """Try again after reconnect_min_s, doubling the wait up to reconnect_max_s; yield the
        gap after each failed try. True once connected, False when closed meanwhile."""
        wait_s = self.config.reconnect_min_s
        while not self._closing.wait(wait_s):
            try:
                self._connect()
                return True
            except _Down:
                yield gap
            wait_s = min(2 * wait_s, self.config.reconnect_max_s)
        return False

    def _release(self) -> None:
        self._disconnect()

    def _failure(self, exc: Exception) -> str:
        """Why reading failed, in words."""
        return _why(exc)

    def _connect(self) -> None:
        raise NotImplementedError

    def _images(self) -> Iterator[np.ndarray | None]:
        raise NotImplementedError

    def _disconnect(self) -> None:
        raise NotImplementedError


class StreamSource(_LiveSource):
    """A network stream (RTSP, HTTP, ...) through PyAV, every blocking call bounded by the open
    and read timeouts."""

    def __init__(self, url: str, config: SourceConfig) -> None:
        self._container = None
        super().__init__(url, config)

    def _connect(self) -> None:
        cfg = self.config
        options = {"rtsp_transport": cfg.rtsp_transport} if self.name.startswith("rtsp") else {}
        started = time.monotonic()
        try:
            container = av.open(
                self.name, options=options, timeout=(cfg.open_timeout_s, cfg.read_timeout_s)
            )
        except Exception as exc:  # whatever FFmpeg or the network says: the stream is not there
            waited_s = time.monotonic() - started
            if isinstance(exc, av.error.ExitError) or waited_s >= cfg.open_timeout_s:
                raise _Down(f"no stream within the {cfg.open_timeout_s:g} s open timeout") from None
            raise _Down(f"cannot open the stream ({_why(exc)})") from None
        if not container.streams.video:
            container.close()
            raise _Down("no video in the stream")
        self._container, self._stream = container, container.streams.video[0]
        rate = self._stream.average_rate or self._stream.guessed_rate
        self.fps = float(rate) if rate else self.config.fps or DEFAULT_FPS
        cc = self._stream.codec_context
        self.size_wh = (cc.width, cc.height) if cc.width and cc.height else None
        self.finite = self.name.startswith("http") and container.duration is not None

    def _failure(self, exc: Exception) -> str:
        if isinstance(exc, av.error.ExitError):  # PyAV's interrupt callback: the read timed out
            return f"no data for {self.config.read_timeout_s:g} s"
        return _why(exc)

    def _images(self) -> Iterator[np.ndarray | None]:
        decoder = _Decoder(self._container, self._stream, retry_demux=False)
        for picture in decoder.frames():
            yield None if picture is None else picture.to_ndarray(format="bgr24")

    def _disconnect(self) -> None:
        if self._container is not None:
            self._container.close()
            self._container = None


class CameraSource(_LiveSource):
    """A local camera by index, through OpenCV."""

    def __init__(self, index: int, config: SourceConfig) -> None:
        self.index, self._capture = index, None
        super().__init__(f"camera {index}", config)

    def _connect(self) -> None:
        import cv2

        device = Path(f"/dev/video{self.index}")
        if sys.platform.startswith("linux") and not device.exists():
            raise _Down(f"no such device ({device})")
        capture = cv2.VideoCapture(self.index)
        if not capture.isOpened():
            capture.release()
            raise _Down("the camera does not open")
        self._capture = capture
        rate = capture.get(cv2.CAP_PROP_FPS)
        self.fps = float(rate) if rate and rate > 0 else self.config.fps or DEFAULT_FPS
        width, height = (
            capture.get(cv2.CAP_PROP_FRAME_WIDTH),
            capture.get(cv2.CAP_PROP_FRAME_HEIGHT),
        )
        self.size_wh = (int(width), int(height)) if width and height else None

    def _images(self) -> Iterator[np.ndarray | None]:
        while self._capture is not None:
            ok, image = self._capture.read()
            if not ok:
                raise _Down("the camera gave no picture")
            yield image

    def _disconnect(self) -> None:
        if self._capture is not None:
            self._capture.release()
            self._capture = None
