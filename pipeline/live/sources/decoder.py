"""The usable pictures of a PyAV video stream (``_Decoder``), for files and streams alike:
a damaged packet, a picture without a timestamp and the pictures that refer to a broken one
are None."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import av

from pipeline.live.sources.base import _why

_MAX_DEMUX_RETRIES = 32
"""A file whose demuxer fails this many times in a row without a packet is read no further."""


class _Decoder:
    """The decoded pictures of one PyAV video stream, None for each one that cannot be used.

    Unusable: a packet the decoder rejects, a picture without a timestamp or flagged corrupt,
    and every picture after a decode error until the next keyframe (their references are
    broken). ``retry_demux``: a demuxer error is counted and reading goes on (files) instead of
    raising (streams, where it means the connection failed).
    """

    def __init__(self, container, stream, retry_demux: bool) -> None:
        self._container, self._stream, self._retry_demux = container, stream, retry_demux
        self.errors = 0
        self.last_error = ""

    def _note(self, exc: Exception) -> None:
        self.errors += 1
        self.last_error = _why(exc)

    def frames(self, wanted: Callable[[int], bool] | None = None) -> Iterator[av.VideoFrame | None]:
        """The pictures in order. ``wanted(pts)`` False: the packet's picture may be skipped
        if no other picture refers to it (H.264 with B-frames: typically half of them, never
        decoded; a picture others need is decoded and given all the same)."""
        codec = self._stream.codec_context
        packets = self._container.demux(self._stream)
        resync, retries = False, 0
        while True:
            try:
                packet = next(packets)
            except StopIteration:
                return
            except av.FFmpegError as exc:
                if not self._retry_demux:
                    raise
                self._note(exc)
                retries += 1
                if retries > _MAX_DEMUX_RETRIES:
                    return
                packets = self._container.demux(self._stream)
                yield None
                continue
            retries = 0
            if wanted is not None and packet.pts is not None:
                codec.skip_frame = "DEFAULT" if wanted(packet.pts) else "NONREF"
            try:
                pictures = packet.decode()
            except av.FFmpegError as exc:
                self._note(exc)
                resync = True
                yield None
                continue
            for picture in pictures:
                resync = resync and not picture.key_frame
                usable = not (resync or picture.pts is None or picture.is_corrupt)
                yield picture if usable else None
