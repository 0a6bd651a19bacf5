"""A video file through PyAV (:class:`VideoFileSource`): frame times from its timestamps,
unreadable stretches and a truncated end as gaps, pictures between kept ones not decoded."""

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

    def _items(self) -> Iterator[Frame | Gap]:
        stream = self._stream
        start = stream.start_time or 0
        decoder = _Decoder(self._container, stream, retry_demux=True)
        every = self.config.keep_every
        timeline = _Timeline(self.fps, self.config.min_gap_s)

        def wanted(pts: int) -> bool:  # a picture at a multiple of keep_every
            return round(float((pts - start) * stream.time_base) * self.fps) % every == 0

        seen_errors = 0
        skipping = every > 1 and self.config.skip_unreferenced
        for picture in decoder.frames(wanted if skipping else None):
            if picture is None:
                continue
            self.decoded += 1
            time_s = float((picture.pts - start) * stream.time_base)
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
                yield Frame(self.config.camera_id, index, time_s, image)
        end_s = self.duration_s
        end_reason = f"no readable video after {timeline.expected_s:.2f} s of the {end_s} s stated"
        gap = timeline.gap_until(end_s, f"{end_reason} (truncated or damaged file)")
        if gap is not None:
            yield gap

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
