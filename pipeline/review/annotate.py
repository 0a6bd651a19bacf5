"""The annotated video: each result of the pipeline drawn as a picture (:class:`Annotator`)
and encoded to H.264 (:class:`AnnotatedVideo`)."""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from pathlib import Path

import av
import cv2
import numpy as np

from pipeline.alerts import Alert
from pipeline.evidence import alert_line, severity_colour
from pipeline.layout import Layout
from pipeline.live.sources import Gap
from pipeline.runner import FrameResult
from vision.draw import (
    DEFAULT_STYLE,
    band_height,
    draw_card,
    draw_tracks,
    draw_zones,
    text_band,
)

VIDEO_PRESET = "veryfast"  # x264 speed preset of annotated.mp4
MAX_RATE_DENOMINATOR = 1001  # frame rates as fractions: 30000/1001 stays exact


def picture_size(source_wh: tuple[int, int], width_px: int) -> tuple[int, int]:
    """The size of a source picture reduced to at most ``width_px`` wide, both sides even.

    >>> picture_size((1920, 1080), 960)
    (960, 540)
    """
    w, h = source_wh
    scale = min(1.0, width_px / w)
    return max(2, round(w * scale / 2) * 2), max(2, round(h * scale / 2) * 2)


class AnnotatedVideo:
    """H.264 (PyAV) of annotated frames of ``size_wh``. Timestamps are the source's frame
    indices, so a strided review plays in real time (variable frame rate)."""

    def __init__(self, path: Path, size_wh: tuple[int, int], fps: float, crf: int) -> None:
        self.size_wh = size_wh
        self._container = av.open(str(path), "w")
        rate = Fraction(fps).limit_denominator(MAX_RATE_DENOMINATOR)
        self._stream = self._container.add_stream("libx264", rate=rate)
        self._stream.width, self._stream.height = size_wh
        self._stream.pix_fmt = "yuv420p"
        self._stream.codec_context.time_base = 1 / rate
        self._stream.options = {"crf": str(crf), "preset": VIDEO_PRESET}
        self._last_pts = -1

    def write(self, image: np.ndarray, index: int) -> None:
        frame = av.VideoFrame.from_ndarray(image, format="bgr24")
        frame.pts = self._last_pts = max(index, self._last_pts + 1)
        self._container.mux(self._stream.encode(frame))

    def close(self) -> None:
        self._container.mux(self._stream.encode(None))
        self._container.close()


def _status_lines(result: FrameResult, table: str) -> list[str]:
    frame, state = result.frame, result.state
    blind = "  CAMERA LOST" if result.blind else ""
    head = f"{table}  frame {frame.index}  {frame.time_s:.2f} s"
    if state is None:
        return [head + blind]
    facts = []
    if state.dice:
        facts.append(f"dice {' '.join(map(str, state.dice))} -> first box {state.first_box}")
    if state.delivery:
        facts.append("delivered to boxes " + " ".join(map(str, state.delivery)))
    return [
        f"{head}  round {state.round_index}  {str(state.phase).upper()}{blind}",
        "   ".join(facts),
    ]


class Annotator:
    """Pictures of the annotated video: a status band (frame, time, round, phase, dice,
    delivery), the frame reduced to ``picture_wh`` with zones, box numbers and tracks (ids,
    faces; the open alerts' evidence in red), and a band of open alerts below."""

    STATUS_LINES = 2
    ALERT_LINES = 3

    def __init__(self, layout: Layout, table: str, picture_wh: tuple[int, int]) -> None:
        self.layout, self.table, self.picture_wh = layout, table, picture_wh
        self.style = DEFAULT_STYLE.for_width(picture_wh[0])
        extra = band_height(self.STATUS_LINES, self.style) + band_height(
            self.ALERT_LINES, self.style
        )
        self.size_wh = (picture_wh[0], picture_wh[1] + extra)

    def frame(self, result: FrameResult, open_alerts: Mapping[tuple, Alert]) -> np.ndarray:
        image, style, (w, _) = result.frame.image, self.style, self.picture_wh
        scale = w / image.shape[1]
        view = cv2.resize(image, self.picture_wh, interpolation=cv2.INTER_AREA)
        view = draw_zones(view, self.layout.zones_px, scale, style)
        highlight = {i for a in open_alerts.values() for i in _track_ids(a)}
        view = draw_tracks(view, result.tracks, scale, highlight, style, result.frame.index)
        alerts = [(alert_line(a), severity_colour(a)) for a in open_alerts.values()]
        return np.vstack(
            [
                text_band(w, _status_lines(result, self.table), self.STATUS_LINES, style=style),
                view,
                text_band(w, alerts, self.ALERT_LINES, style=style),
            ]
        )

    def gap(self, gap: Gap) -> np.ndarray:
        end = "the end" if gap.end_s is None else f"{gap.end_s:.2f} s"
        lines = ["NO PICTURE", f"{gap.start_s:.2f} s to {end}", gap.reason]
        return draw_card(self.size_wh, lines, self.style)


def _track_ids(alert: Alert) -> list[int]:
    return [i for i in alert.evidence.get("track_ids", ()) if type(i) is int]
