"""An image folder (:class:`ImageFolderSource`): its images in natural name order at a frame
rate; unreadable and incomplete images (still being written, or cut short) as gaps; looped
(``loop``), the first image again after the last, times and indices going on."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from pipeline.live.sources.base import Gap, SourceConfig, SourceError, _Source, _Timeline
from vision.types import Frame

IMAGE_SUFFIXES = (".bmp", ".jpeg", ".jpg", ".png", ".tif", ".tiff", ".webp")
JPEG_START, JPEG_END = b"\xff\xd8", b"\xff\xd9"  # SOI and EOI markers
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
PNG_END = b"\x00\x00\x00\x00IEND\xaeB`\x82"  # the last chunk: IEND, empty, and its CRC


def _natural_key(path: Path) -> list[int | str]:
    """``f2.png`` before ``f10.png``: digit runs compare as numbers."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", path.name)]


class ImageFolderSource(_Source):
    """The images of a folder, in natural name order, at ``config.fps`` (default 25).
    ``incomplete``: the images skipped so far as incomplete (:func:`_is_complete`)."""

    def __init__(self, folder: Path, config: SourceConfig) -> None:
        super().__init__(str(folder), config)
        self._paths = sorted(
            (p for p in folder.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES and p.is_file()),
            key=_natural_key,
        )
        if not self._paths:
            raise SourceError(f"{folder}: no images in the folder ({' '.join(IMAGE_SUFFIXES)})")
        self.incomplete: list[Path] = []
        self.loops = 0  # times the folder started again at its first image (``loop``)
        first = _read_image(self._paths[0]) if _is_complete(self._paths[0]) else None
        self.size_wh = None if first is None else (first.shape[1], first.shape[0])

    def _items(self) -> Iterator[Frame | Gap]:
        timeline = _Timeline(self.fps, self.config.min_gap_s, self.config.keep_every)
        offset = 0  # images before this pass: the passes before it, when looped
        while True:
            given = yield from self._pass(timeline, offset)
            if not (self.config.loop and given):  # a pass without a frame is not repeated
                return
            offset += len(self._paths)
            self.loops += 1

    def _pass(self, timeline: _Timeline, offset: int) -> Iterator[Frame | Gap]:
        """The images once, numbered from ``offset``; returns the frames given."""
        incomplete, given = 0, 0  # incomplete: since the last frame
        for number, path in enumerate(self._paths, start=offset):
            if number % self.config.keep_every:  # not read at all
                continue
            if not _is_complete(path):
                if not offset:  # listed once, not again on every pass
                    self.incomplete.append(path)
                incomplete += 1
                continue
            image = _read_image(path)
            if image is None:
                continue
            time_s = number / self.fps
            gap = timeline.gap_until(time_s, _folder_reason(incomplete))
            if gap is not None:
                yield gap
            incomplete, given = 0, given + 1
            yield Frame(self.config.camera_id, timeline.advance(time_s), time_s, image)
        end_s = (offset + len(self._paths)) / self.fps
        gap = timeline.gap_until(end_s, _folder_reason(incomplete))
        if gap is not None:
            yield gap
        return given

    def _release(self) -> None:
        """Nothing held between images."""


def _folder_reason(incomplete: int) -> str:
    if not incomplete:
        return "unreadable images"
    return f"unreadable images ({incomplete} incomplete: still being written?)"


def _is_complete(path: Path) -> bool:
    """False for a JPEG that does not end with its EOI marker or a PNG that does not end with
    its IEND chunk (trailing bytes count as incomplete); True for any other file, which its
    decoder judges, and for one that cannot be opened (unreadable, not incomplete)."""
    try:
        with path.open("rb") as file:
            head = file.read(len(PNG_SIGNATURE))
            size = file.seek(0, os.SEEK_END)
            file.seek(max(0, size - len(PNG_END)))
            tail = file.read()
    except OSError:
        return True
    if head.startswith(JPEG_START):
        return tail.endswith(JPEG_END)
    if head == PNG_SIGNATURE:
        return tail == PNG_END
    return True


def _read_image(path: Path) -> np.ndarray | None:
    import cv2

    return cv2.imread(str(path), cv2.IMREAD_COLOR)
