"""Drawing for review videos and snapshots: zones, detections, tracks, banners (OpenCV only).

Every function takes a BGR ``image (H, W, 3) uint8`` and returns an annotated *copy*; the
caller's image is never modified. Geometry is given in the pixels of the frame it came from
(full resolution); ``scale`` maps it onto the image being drawn on, so a 1920x1080 frame's
tracks can be drawn on its 960x540 reduction with ``scale=0.5``::

    small, scale = fit_width(frame.image, 960)
    view = draw_zones(small, layout.zones_px, scale)
    view = draw_tracks(view, tracks, scale, highlight={12, 17})
    view = draw_banner(view, ["round 2  delivery  14.2 s"])
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace

import cv2
import numpy as np

from vision.types import CHIP, DIE, HAND, TILE_DOWN, TILE_UP, Detections, Track

BGR = tuple[int, int, int]
FONT = cv2.FONT_HERSHEY_SIMPLEX
REFERENCE_WIDTH_PX = 960  # DrawStyle's sizes are for images this wide
OUTLINE_OFFSETS = ((-1, -1), (1, -1), (-1, 1), (1, 1))  # text outline: shifts in strokes

CLASS_COLOURS: dict[int, BGR] = {
    TILE_DOWN: (0, 140, 255),  # orange: a face-down tile
    TILE_UP: (80, 230, 80),  # green: a face-up tile
    CHIP: (230, 80, 230),  # magenta
    DIE: (0, 255, 255),  # yellow
    HAND: (170, 170, 170),  # grey
}
# the one severity palette: the review report takes its CSS colours from it
SEVERITY_COLOURS: dict[str, BGR] = {
    "critical": (40, 40, 220),  # red
    "high": (0, 110, 240),  # orange
    "medium": (0, 190, 240),  # amber
    "low": (0, 215, 255),  # yellow
}
HIGHLIGHT: BGR = (60, 60, 255)
WHITE: BGR = (255, 255, 255)
BLACK: BGR = (0, 0, 0)
BAND_GREY = 24  # grey level of text bands and no-picture cards


@dataclass(frozen=True)
class DrawStyle:
    """Sizes in pixels of the image drawn on; fonts in OpenCV's font scale."""

    line_px: int = 1  # box and zone outlines
    text_px: int = 1  # stroke of the text (its dark outline is 2 px wider)
    highlight_px: int = 3  # outline of a highlighted (evidence) track
    font_scale: float = 0.4  # track labels and area names
    box_font_scale: float = 0.9  # the box numbers 1-8
    banner_font_scale: float = 0.55
    banner_pad_px: int = 6
    banner_alpha: float = 0.7  # opacity of a banner's background; higher hides more picture
    zone_colour: BGR = (255, 200, 60)  # light blue: apart from the felt's own markings
    box_zone_colour: BGR = (255, 255, 255)

    def scaled(self, factor: float) -> DrawStyle:
        """The style for an image ``factor`` times as large (lines at least 1 px).

        >>> DrawStyle().scaled(2.0).line_px
        2
        """
        return replace(
            self,
            line_px=max(1, round(self.line_px * factor)),
            highlight_px=max(1, round(self.highlight_px * factor)),
            font_scale=self.font_scale * factor,
            box_font_scale=self.box_font_scale * factor,
            banner_font_scale=self.banner_font_scale * factor,
            banner_pad_px=max(1, round(self.banner_pad_px * factor)),
            text_px=max(1, round(self.text_px * factor)),
        )

    def for_width(self, width_px: int) -> DrawStyle:
        """This style (made for ``REFERENCE_WIDTH_PX``-wide images) for ``width_px``."""
        return self.scaled(width_px / REFERENCE_WIDTH_PX)


DEFAULT_STYLE = DrawStyle()


def fit_width(image: np.ndarray, width_px: int) -> tuple[np.ndarray, float]:
    """``image`` resized to ``width_px`` wide (aspect kept, even height), and the scale used.
    An image already that wide or narrower is returned as a copy at scale 1.

    >>> small, scale = fit_width(np.zeros((1080, 1920, 3), np.uint8), 960)
    >>> small.shape, scale
    ((540, 960, 3), 0.5)
    """
    h, w = image.shape[:2]
    if w <= width_px:
        return image.copy(), 1.0
    scale = width_px / w
    height = max(2, round(h * scale / 2) * 2)
    return cv2.resize(image, (width_px, height), interpolation=cv2.INTER_AREA), scale


def _outlined_text(
    image: np.ndarray,
    text: str,
    org: tuple[int, int],
    font_scale: float,
    colour: BGR,
    text_px: int = 1,
    outline: bool = True,
) -> None:
    """Text with a dark outline, readable on felt and on tiles alike (draws in place). The
    outline is the text in black shifted a pixel each way: a thicker stroke would not do, as
    the stroke changes the glyphs' advance and the outline would run past the text."""
    x, y = org
    for dx, dy in OUTLINE_OFFSETS if outline else ():
        shifted = (x + dx * text_px, y + dy * text_px)
        cv2.putText(image, text, shifted, FONT, font_scale, BLACK, text_px, cv2.LINE_AA)
    cv2.putText(image, text, org, FONT, font_scale, colour, text_px, cv2.LINE_AA)


def _centred_text(
    image: np.ndarray,
    text: str,
    centre: np.ndarray,
    font_scale: float,
    colour: BGR,
    text_px: int = 1,
) -> None:
    (w, h), _ = cv2.getTextSize(text, FONT, font_scale, text_px)
    org = (int(centre[0] - w / 2), int(centre[1] + h / 2))
    _outlined_text(image, text, org, font_scale, colour, text_px)


def draw_zones(
    image: np.ndarray,
    zones_px: Mapping[str, np.ndarray],
    scale: float = 1.0,
    style: DrawStyle = DEFAULT_STYLE,
) -> np.ndarray:
    """Zone outlines ``name -> (M, 2)`` px, boxes (``box_N``) labelled with their number and
    areas with their name.

    >>> square = np.array([[2, 2], [8, 2], [8, 8], [2, 8]], float)
    >>> out = draw_zones(np.zeros((10, 10, 3), np.uint8), {"box_1": square})
    >>> out.shape, bool(out.any())
    ((10, 10, 3), True)
    """
    out = image.copy()
    for name, polygon in zones_px.items():
        pts = np.round(np.asarray(polygon, np.float64) * scale).astype(np.int32)
        is_box = name.startswith("box_")
        colour = style.box_zone_colour if is_box else style.zone_colour
        cv2.polylines(out, [pts], True, colour, style.line_px, cv2.LINE_AA)
        centre = pts.mean(axis=0)
        if is_box:
            text, font_scale = name.removeprefix("box_"), style.box_font_scale
        else:
            text, font_scale = name.replace("_", " "), style.font_scale
        _centred_text(out, text, centre, font_scale, colour, style.text_px)
    return out


def _rect(image: np.ndarray, xyxy: Sequence[float], scale: float, colour: BGR, px: int) -> None:
    x1, y1, x2, y2 = (round(float(v) * scale) for v in xyxy)
    cv2.rectangle(image, (x1, y1), (x2, y2), colour, px, cv2.LINE_8)  # crisp, exact colour


def draw_detections(
    image: np.ndarray, detections: Detections, scale: float = 1.0, style: DrawStyle = DEFAULT_STYLE
) -> np.ndarray:
    """Detection boxes ``xyxy (N, 4)`` px outlined in their class colour (no labels)."""
    out = image.copy()
    for xyxy, class_id in zip(detections.xyxy, detections.class_id, strict=True):
        _rect(out, xyxy, scale, CLASS_COLOURS.get(int(class_id), WHITE), style.line_px)
    return out


def track_label(track: Track) -> str:
    """``#id`` and what is known of it: a tile's face, a die's value.

    >>> track_label(Track(7, (0, 0, 1, 1), TILE_UP, True, "6-6", None, "box_1", 3, 3))
    '#7 6-6'
    """
    known = track.face if track.kind == "tile" else track.die_value
    return f"#{track.track_id}" + ("" if known is None else f" {known}")


def draw_tracks(
    image: np.ndarray,
    tracks: Sequence[Track],
    scale: float = 1.0,
    highlight: Collection[int] = (),
    style: DrawStyle = DEFAULT_STYLE,
    frame: int | None = None,
) -> np.ndarray:
    """Track boxes in their class colour, labelled with id and known face; tracks whose id is
    in ``highlight`` get a thick red outline. Hands are outlined, not labelled. ``frame``: the
    frame drawn; a track not seen in it (a tile the tracker remembers where it was last seen,
    hidden under a hand or beneath a tile of a woodpile stack) is drawn only when highlighted
    (an alert's evidence), so the picture shows what the camera sees.

    >>> t = Track(3, (2.0, 2.0, 12.0, 8.0), TILE_DOWN, False, None, None, None, 1, 1)
    >>> out = draw_tracks(np.zeros((20, 20, 3), np.uint8), [t], highlight={3})
    >>> tuple(int(v) for v in out[2, 7])
    (60, 60, 255)
    """
    out = image.copy()
    if frame is not None:
        tracks = [t for t in tracks if t.last_seen_frame >= frame or t.track_id in highlight]
    for track in tracks:
        colour = CLASS_COLOURS.get(track.class_id, WHITE)
        _rect(out, track.xyxy, scale, colour, style.line_px)
        if track.class_id == HAND:
            continue
        x1, y1 = track.xyxy[0] * scale, track.xyxy[1] * scale
        org = (int(x1), int(y1) - style.line_px - 1)
        _outlined_text(out, track_label(track), org, style.font_scale, colour, style.text_px)
    for track in tracks:  # on top of everything else
        if track.track_id in highlight:
            _rect(out, track.xyxy, scale, HIGHLIGHT, style.highlight_px)
    return out


def _line_metrics(style: DrawStyle) -> tuple[int, int]:
    """Text height and line pitch of banner text, in pixels."""
    (_, text_h), baseline = cv2.getTextSize("Ag", FONT, style.banner_font_scale, style.text_px)
    return text_h, text_h + baseline + style.banner_pad_px


def _write_lines(
    image: np.ndarray,
    lines: Sequence[str | tuple[str, BGR]],
    y0: int,
    colour: BGR,
    style: DrawStyle,
    outline: bool,
) -> None:
    text_h, line_h = _line_metrics(style)
    pad = style.banner_pad_px
    for i, line in enumerate(lines):
        text, line_colour = line if isinstance(line, tuple) else (line, colour)
        org = (pad, y0 + pad + text_h + i * line_h)
        scale = style.banner_font_scale
        _outlined_text(image, text, org, scale, line_colour, style.text_px, outline)


def draw_banner(
    image: np.ndarray,
    lines: Sequence[str | tuple[str, BGR]],
    colour: BGR = WHITE,
    background: BGR = BLACK,
    top: bool = True,
    style: DrawStyle = DEFAULT_STYLE,
) -> np.ndarray:
    """A band of text lines across the top (or bottom) of the image on a translucent
    background; a line given as ``(text, colour)`` has its own colour. No lines: an
    unchanged copy.

    >>> out = draw_banner(np.full((60, 200, 3), 128, np.uint8), ["hello"])
    >>> int(out[2, 100, 0]) < 128, int(out[-1, 100, 0])
    (True, 128)
    """
    out = image.copy()
    if not lines:
        return out
    band_h = min(out.shape[0], band_height(len(lines), style))
    y0 = 0 if top else out.shape[0] - band_h
    band = out[y0 : y0 + band_h]
    fill = np.empty_like(band)
    fill[:] = background
    cv2.addWeighted(fill, style.banner_alpha, band, 1 - style.banner_alpha, 0, dst=band)
    _write_lines(out, lines, y0, colour, style, outline=True)
    return out


def band_height(n_lines: int, style: DrawStyle = DEFAULT_STYLE) -> int:
    """Height in pixels (even, for video) of a band of ``n_lines`` lines of banner text."""
    _, line_h = _line_metrics(style)
    height = line_h * n_lines + style.banner_pad_px
    return height + height % 2


def text_band(
    width_px: int,
    lines: Sequence[str | tuple[str, BGR]],
    n_lines: int,
    colour: BGR = WHITE,
    style: DrawStyle = DEFAULT_STYLE,
) -> np.ndarray:
    """A solid dark strip ``(band_height(n_lines), width_px, 3)`` holding up to ``n_lines``
    lines, to stack above or below a picture without hiding any of it; more lines than fit
    end in a ``+N more`` line.

    >>> text_band(200, ["a", "b", "c"], 2).shape == (band_height(2), 200, 3)
    True
    """
    out = np.full((band_height(n_lines, style), width_px, 3), BAND_GREY, np.uint8)
    if len(lines) > n_lines:
        lines = [*lines[: n_lines - 1], f"+{len(lines) - n_lines + 1} more"]
    _write_lines(out, lines, 0, colour, style, outline=False)
    return out


def draw_card(
    size_wh: tuple[int, int], lines: Sequence[str], style: DrawStyle = DEFAULT_STYLE
) -> np.ndarray:
    """A dark picture ``(H, W, 3)`` with centred lines of text: what a review video shows
    where the source gave no picture.

    >>> draw_card((64, 32), ["no picture"]).shape
    (32, 64, 3)
    """
    w, h = size_wh
    out = np.full((h, w, 3), BAND_GREY, np.uint8)
    _, line_h = _line_metrics(style)
    top = h / 2 - line_h * (len(lines) - 1) / 2
    for i, text in enumerate(lines):
        centre = np.array([w / 2, top + i * line_h])
        _centred_text(out, text, centre, style.banner_font_scale, WHITE, style.text_px)
    return out
