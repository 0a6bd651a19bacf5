"""Pinhole ceiling camera over the table plane, and the table-plane canvas.

Table frame: millimetres, origin at the table centre, ``x`` to the right as the camera sees an
untilted table, ``y`` towards the players (the dealer is at negative ``y``), ``z`` into the
table, so a point ``h`` mm above the felt has ``z = -h``.

Everything is drawn on a table-plane canvas and warped to the image with one homography. An
object ``h`` mm above the felt is drawn where the camera ray through it meets the felt
(:meth:`Camera.lift`), which makes tile thickness, stack heights and parallax exact.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from vision.synth.settings import RenderSettings


@dataclass(frozen=True, slots=True)
class CameraParams:
    """A concrete camera pose (sampled from :class:`~vision.synth.config.CameraRanges`)."""

    resolution_wh: tuple[int, int] = (1920, 1080)
    target_mm: tuple[float, float] = (0.0, 20.0)
    tilt_deg: float = 0.0
    azimuth_deg: float = 90.0
    roll_deg: float = 0.0
    px_per_mm: float = 1.08
    distance_mm: float = 2600.0
    principal_offset_px: tuple[float, float] = (0.0, 0.0)


def _axes(params: CameraParams) -> np.ndarray:
    """World-to-camera rotation ``(3, 3)``: rows are the camera x, y and optical axes."""
    tilt, azim, roll = (
        math.radians(a) for a in (params.tilt_deg, params.azimuth_deg, params.roll_deg)
    )
    view = np.array(
        [-math.sin(tilt) * math.cos(azim), -math.sin(tilt) * math.sin(azim), math.cos(tilt)]
    )
    x_axis = np.array([1.0, 0.0, 0.0]) - view[0] * view
    x_axis /= np.linalg.norm(x_axis)
    y_axis = np.cross(view, x_axis)
    x_rolled = math.cos(roll) * x_axis + math.sin(roll) * y_axis
    y_rolled = -math.sin(roll) * x_axis + math.cos(roll) * y_axis
    return np.stack([x_rolled, y_rolled, view])


@dataclass(frozen=True)
class Camera:
    """Intrinsics ``K (3,3)``, rotation ``R (3,3)`` world->camera, centre ``(3,)`` in mm."""

    params: CameraParams
    K: np.ndarray
    R: np.ndarray
    centre_mm: np.ndarray
    H_img_from_table: np.ndarray

    @classmethod
    def from_params(cls, params: CameraParams) -> Camera:
        rot = _axes(params)
        target = np.array([*params.target_mm, 0.0])
        centre = target - params.distance_mm * rot[2]
        focal = params.px_per_mm * params.distance_mm
        w, h = params.resolution_wh
        k = np.array(
            [
                [focal, 0.0, w / 2 + params.principal_offset_px[0]],
                [0.0, focal, h / 2 + params.principal_offset_px[1]],
                [0.0, 0.0, 1.0],
            ]
        )
        t = -rot @ centre
        homography = k @ np.column_stack([rot[:, 0], rot[:, 1], t])
        return cls(params, k, rot, centre, homography / homography[2, 2])

    @property
    def height_mm(self) -> float:
        """Height of the camera centre above the felt."""
        return float(-self.centre_mm[2])

    def table_to_image(self, xy_mm: np.ndarray) -> np.ndarray:
        """Project felt points ``(N, 2)`` mm to image pixels ``(N, 2)``.

        >>> cam = Camera.from_params(CameraParams(target_mm=(0.0, 0.0), px_per_mm=1.0))
        >>> cam.table_to_image(np.array([[0.0, 0.0], [100.0, 0.0]])).round(3).tolist()
        [[960.0, 540.0], [1060.0, 540.0]]
        """
        return apply_homography(self.H_img_from_table, xy_mm)

    def image_to_table(self, xy_px: np.ndarray) -> np.ndarray:
        """Back-project image pixels ``(N, 2)`` to felt points ``(N, 2)`` mm."""
        return apply_homography(np.linalg.inv(self.H_img_from_table), xy_px)

    def lift(self, xy_mm: np.ndarray, height_mm: float | np.ndarray) -> np.ndarray:
        """Felt point ``(N, 2)`` that images where the point ``height_mm`` above ``xy_mm`` does."""
        ground = self.centre_mm[:2]
        scale = self.height_mm / (self.height_mm - np.asarray(height_mm, dtype=np.float64))
        return ground + (np.asarray(xy_mm, dtype=np.float64) - ground) * np.reshape(scale, (-1, 1))

    def lift_affine(self, height_mm: float) -> np.ndarray:
        """The lift at one height as a ``(3, 3)`` affine on felt mm (a scale about the ground)."""
        ground = self.centre_mm[:2]
        scale = self.height_mm / (self.height_mm - height_mm)
        return np.array(
            [
                [scale, 0.0, ground[0] * (1 - scale)],
                [0.0, scale, ground[1] * (1 - scale)],
                [0, 0, 1],
            ]
        )


def apply_homography(h: np.ndarray, xy: np.ndarray) -> np.ndarray:
    """Apply a ``(3, 3)`` homography to points ``(N, 2)``; returns ``(N, 2)`` float64."""
    pts = np.asarray(xy, dtype=np.float64).reshape(-1, 2)
    homog = pts @ h[:, :2].T + h[:, 2]
    return homog[:, :2] / homog[:, 2:3]


@dataclass(frozen=True, slots=True)
class Canvas:
    """Raster of the table plane: ``px = (mm - origin_mm) * px_per_mm``."""

    origin_mm: tuple[float, float]
    px_per_mm: float
    size_wh: tuple[int, int]

    @classmethod
    def from_settings(cls, settings: RenderSettings) -> Canvas:
        x0, y0, x1, y1 = settings.canvas_extent_mm
        s = settings.canvas_px_per_mm
        return cls((x0, y0), s, (round((x1 - x0) * s), round((y1 - y0) * s)))

    @property
    def px_from_mm(self) -> np.ndarray:
        """``(3, 3)`` affine taking table mm to canvas pixels."""
        s = self.px_per_mm
        return np.array([[s, 0, -self.origin_mm[0] * s], [0, s, -self.origin_mm[1] * s], [0, 0, 1]])

    def to_px(self, xy_mm: np.ndarray) -> np.ndarray:
        """Table mm ``(N, 2)`` to canvas pixels ``(N, 2)``."""
        return (
            np.asarray(xy_mm, dtype=np.float64).reshape(-1, 2) - self.origin_mm
        ) * self.px_per_mm

    def image_from_canvas(self, camera: Camera) -> np.ndarray:
        """``(3, 3)`` homography taking canvas pixels to image pixels."""
        return camera.H_img_from_table @ np.linalg.inv(self.px_from_mm)
