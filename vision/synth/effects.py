"""Image-space lighting and sensor effects: gain, gradient, vignette, glare, blur, noise, JPEG.

All operations work on uint8 with saturating OpenCV arithmetic (a 1080p float pipeline costs
several times more). Noise is cropped at a random offset from a fixed pool of Gaussian noise.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from vision.synth.scene import Effects
from vision.synth.settings import RenderSettings

_POOL_MEAN = 128


class NoisePool:
    """Gaussian noise ``(H + m, W + m, 3)`` uint8 around 128, made once per renderer."""

    def __init__(self, settings: RenderSettings):
        w, h = settings.resolution_wh
        m = settings.noise_pool_margin_px
        rng = np.random.default_rng(settings.noise_pool_seed)
        noise = rng.standard_normal((h + m, w + m, 3), dtype=np.float32) * settings.noise_pool_sigma
        self.sigma = settings.noise_pool_sigma
        self.margin = m
        self.pool = np.clip(noise + _POOL_MEAN, 0, 255).astype(np.uint8)

    def crop(self, seed: int, shape: tuple[int, int]) -> np.ndarray:
        """A view ``(h, w, 3)`` at an offset drawn from ``seed``."""
        rng = np.random.default_rng(seed)
        dy, dx = (int(v) for v in rng.integers(0, self.margin + 1, size=2))
        return self.pool[dy : dy + shape[0], dx : dx + shape[1]]


def gain_map(effects: Effects, shape: tuple[int, int], settings: RenderSettings) -> np.ndarray:
    """Per-pixel, per-channel gain ``(h, w, 3)`` uint8 scaled by ``settings.gain_scale``."""
    h, w = shape
    ds = settings.lighting_downscale
    sh, sw = max(2, h // ds), max(2, w // ds)
    y, x = np.mgrid[0:sh, 0:sw].astype(np.float32)
    u, v = x / (sw - 1) - 0.5, y / (sh - 1) - 0.5
    a = math.radians(effects.gradient_angle_deg)
    g = effects.gain * (1.0 + effects.gradient * (u * math.cos(a) + v * math.sin(a)))
    g = g * (1.0 - effects.vignette * (u * u + v * v) * 2.0)
    cast = 1.0 + np.asarray(effects.colour_cast, dtype=np.float32)
    small = g[..., None] * cast * settings.gain_scale
    small_u8 = np.clip(small + 0.5, 0, 255).astype(np.uint8)
    return cv2.resize(small_u8, (w, h), interpolation=cv2.INTER_LINEAR)


def glare_map(
    effects: Effects, shape: tuple[int, int], settings: RenderSettings
) -> np.ndarray | None:
    """Additive grey glare ``(h, w)`` uint8, or ``None`` when there is no glare."""
    if not effects.glares:
        return None
    h, w = shape
    ds = settings.lighting_downscale // 2
    sh, sw = h // ds, w // ds
    y, x = np.mgrid[0:sh, 0:sw].astype(np.float32) * ds
    total = np.zeros((sh, sw), np.float32)
    for glare in effects.glares:
        d2 = (x - glare.xy_px[0]) ** 2 + (y - glare.xy_px[1]) ** 2
        total += glare.strength * np.exp(-d2 / (2 * glare.radius_px**2))
    small = np.clip(total + 0.5, 0, 255).astype(np.uint8)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)


def motion_blur(image: np.ndarray, length_px: float, angle_deg: float) -> np.ndarray:
    """Average of shifted copies along a line (camera shake)."""
    steps = max(2, round(length_px))
    a = math.radians(angle_deg)
    acc = np.zeros(image.shape, np.float32)
    for k in range(steps):
        t = k - (steps - 1) / 2
        m = np.float32([[1, 0, t * math.cos(a)], [0, 1, t * math.sin(a)]])
        acc += cv2.warpAffine(image, m, image.shape[1::-1], borderMode=cv2.BORDER_REPLICATE)
    return (acc / steps + 0.5).astype(np.uint8)


def apply_effects(
    image: np.ndarray, effects: Effects, settings: RenderSettings, pool: NoisePool
) -> np.ndarray:
    """Lighting, glare, motion blur, noise, then JPEG round trip; returns a new image."""
    shape = image.shape[:2]
    out = cv2.multiply(image, gain_map(effects, shape, settings), scale=1.0 / settings.gain_scale)
    glare = glare_map(effects, shape, settings)
    if glare is not None:
        out = cv2.add(out, cv2.merge([glare, glare, glare]))
    if effects.motion_blur_px > 1:
        out = motion_blur(out, effects.motion_blur_px, effects.motion_blur_angle_deg)
    if effects.noise_sigma > 0:
        k = effects.noise_sigma / pool.sigma
        out = cv2.addWeighted(out, 1.0, pool.crop(effects.noise_seed, shape), k, -_POOL_MEAN * k)
    if effects.jpeg_quality > 0:
        ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, int(effects.jpeg_quality)])
        if ok:
            out = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    return out
