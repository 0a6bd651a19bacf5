"""A video file through PyAV (:class:`VideoFileSource`): frame times from its timestamps,
unreadable stretches and a truncated end as gaps, pictures between kept ones not decoded;
looped (``loop``), the file starts again at its end with times and indices going on."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import av

from pipeline.live.sources.base import Gap, SourceConfig, SourceError, _Source, _Timeline, _why
from pipeline.live.sources.decoder import _Decoder
from vision.types import Frame


class VideoFileSource(_Source):
    """A video file through PyAV; frame times from its timestamps (see the module doc)."""

    def __init__(self, path: Path, config: SourceConfig) -> None:
        super().__init__(str(path), config)
        try:
            self._container = av.open(str(path))
        except (av.FFmpegError, OSError) as exc:
            raise SourceError(f"{path}: not a video ({_why(exc)}){_cut_hint(path)}") from None
        if not self._container.streams.video:
            self._container.close()
            raise SourceError(f"{path}: no video stream in the file")
        stream = self._stream = self._container.streams.video[0]
        rate = stream.average_rate or stream.guessed_rate
        self.fps = float(rate) if rate else self.fps
        width, height = stream.codec_context.width, stream.codec_context.height
        self.size_wh = (width, height) if width and height else None
        self.duration_s = _stated_duration_s(self._container, stream)
        self.decoded = 0  # pictures decoded so far (with keep_every, fewer than in the file)
        self.loops = 0  # times the file started again at its start (``loop``)

    def _items(self) -> Iterator[Frame | Gap]:
        timeline = _Timeline(self.fps, self.config.min_gap_s)
        offset = 0  # frame slots before this pass: the passes before it, when looped
        while True:
            given = yield from self._pass(timeline, offset)
            if not (self.config.loop and given):  # a pass without a frame is not repeated
                return
            offset = max(timeline.next_index, offset + round((self.duration_s or 0) * self.fps))
            self._container.seek(0)  # also flushes the decoder
            self.loops += 1

    def _pass(self, timeline: _Timeline, offset: int) -> Iterator[Frame | Gap]:
        """The file once, its times ``offset`` frame slots on; returns the frames given."""
        stream = self._stream
        start = stream.start_time or 0
        decoder = _Decoder(self._container, stream, retry_demux=True)
        every = self.config.keep_every
        offset_s = offset / self.fps

        def slot(pts: int) -> int:
            return round(float((pts - start) * stream.time_base) * self.fps) + offset

        seen_errors, given = 0, 0
        skipping = every > 1 and self.config.skip_unreferenced
        for picture in decoder.frames((lambda pts: slot(pts) % every == 0) if skipping else None):
            if picture is None:
                continue
            self.decoded += 1
            time_s = float((picture.pts - start) * stream.time_base) + offset_s
            reason = _file_reason(decoder, seen_errors, "frames missing from the file")
            placed = timeline.place(time_s, reason)
            if placed is None:
                continue
            seen_errors = decoder.errors
            index, gap = placed
            if gap is not None:
                yield gap
            if index % every == 0:
                image = picture.to_ndarray(format="bgr24")
                given += 1
                yield Frame(self.config.camera_id, index, time_s, image)
        end_s = self.duration_s
        end_reason = f"no readable video after {timeline.expected_s - offset_s:.2f} s"
        end_reason += f" of the {end_s} s stated (truncated or damaged file)"
        gap = timeline.gap_until(None if end_s is None else end_s + offset_s, end_reason)
        if gap is not None:
            yield gap
        return given

    def _release(self) -> None:
        self._container.close()


def _file_reason(decoder: _Decoder, seen_errors: int, otherwise: str) -> str:
    new = decoder.errors - seen_errors
    if new <= 0:
        return otherwise
    return f"unreadable video data ({new} errors: {decoder.last_error})"


def _cut_hint(path: Path) -> str:
    if path.suffix.lower() in (".mp4", ".mov", ".m4v"):
        return "; an MP4 cut off before its index was written cannot be read"
    return ""


def _stated_duration_s(container, stream) -> float | None:
    """The duration the file states, in seconds from its first picture; None if unknown."""
    if stream.duration is not None and stream.time_base is not None:
        return float(stream.duration * stream.time_base)
    if container.duration is not None:
        return container.duration / av.time_base
    return None
