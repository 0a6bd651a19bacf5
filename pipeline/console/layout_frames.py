"""One picture for the layout editor: a camera's frame (file, folder, stream) or an uploaded
image, given back to the page as JPEG. Blocking (decoding, a stream's open timeout): call from a
worker thread. Every error is a :class:`FrameError` with one line.
"""

from __future__ import annotations

import cv2
import numpy as np

from pipeline.live.sources import Gap, SourceError, open_source
from vision.types import Frame

MAX_UPLOAD_BYTES = 20 << 20
"""An uploaded picture's largest size: a 4K PNG is ~25 MB at worst, a camera's JPEG a few MB."""
OPEN_TIMEOUT_S = 5.0  # a stream not open by then is unreachable; higher: slow cameras get a
# chance, lower: the page answers sooner when the URL is wrong
READ_TIMEOUT_S = 5.0  # an open stream with no picture this long gives up (the page says so)
MAX_GAPS = 8  # a file or folder whose first stretches are unreadable: gaps passed before giving up
JPEG_QUALITY = 92  # the page only places zones on it: sharp enough, a tenth of a PNG's size


class FrameError(ValueError):
    """No picture from what the page gave; the message is one line."""


def frame_from_source(spec: str) -> np.ndarray:
    """The first picture ``(H, W, 3) uint8`` BGR of SOURCE ``spec`` (a video file, an image
    folder, a stream URL or a camera index, as :func:`pipeline.live.sources.open_source`)."""
    spec = spec.strip()
    if not spec:
        raise FrameError("no source: type a video file's path or a stream URL")
    try:
        source = open_source(spec, open_timeout_s=OPEN_TIMEOUT_S, read_timeout_s=READ_TIMEOUT_S)
    except SourceError as err:
        raise FrameError(str(err)) from None
    with source:
        gaps = 0
        for item in source:
            match item:
                case Frame(image=image):
                    return image
                case Gap(reason=reason):
                    gaps += 1
                    if source.live or gaps >= MAX_GAPS:
                        raise FrameError(f"{spec}: no picture ({reason})")
    raise FrameError(f"{spec}: no frame in it")


def frame_from_upload(data: bytes) -> np.ndarray:
    """The picture ``(H, W, 3) uint8`` BGR in an uploaded file (any format OpenCV reads)."""
    if not data:
        raise FrameError("the upload is empty: choose a picture file")
    if len(data) > MAX_UPLOAD_BYTES:
        raise FrameError(f"the upload is larger than {MAX_UPLOAD_BYTES >> 20} MiB")
    image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    if image is None:
        raise FrameError("the upload is not a picture (PNG, JPEG, BMP, TIFF, WebP ...)")
    return image


def jpeg_bytes(image: np.ndarray) -> bytes:
    """``image (H, W, 3) uint8`` BGR as JPEG bytes."""
    ok, encoded = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])
    if not ok:
        raise FrameError("the picture could not be encoded as JPEG")
    return encoded.tobytes()
