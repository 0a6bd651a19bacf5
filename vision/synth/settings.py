"""Fixed (non-random) rendering constants: physical sizes, sprite resolution, shadows.

Physical sizes are in table millimetres; the table plane is rasterised on a "canvas" at
``canvas_px_per_mm`` and warped to the image with one homography.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Sizes:
    """Physical object sizes in mm (casino tiles are 2.5 x 1 x 0.375 in)."""

    tile_width_mm: float = 25.4
    tile_length_mm: float = 63.5
    tile_thickness_mm: float = 9.5
    tile_corner_mm: float = 3.0
    pip_radius_mm: float = 2.5
    one_pip_radius_mm: float = 4.3
    pip_dx_mm: float = 6.2
    pip_dy_mm: float = 6.2
    pip_dy_six_mm: float = 8.6
    divider_width_mm: float = 0.5
    tile_rim_mm: float = 0.8
    chip_diameter_mm: float = 40.0
    chip_thickness_mm: float = 3.3
    chip_inserts: int = 8
    die_mm: float = 16.0
    die_corner_mm: float = 2.5
    die_pip_radius_mm: float = 1.6
    die_one_pip_radius_mm: float = 2.8
    chung_radius_mm: float = 30.0
    chung_height_mm: float = 6.0


@dataclass(frozen=True, slots=True)
class RenderSettings:
    """How the renderer rasterises; none of these are randomised."""

    resolution_wh: tuple[int, int] = (1920, 1080)
    # canvas resolution: at least the image's px/mm so tiles are not blurred by the warp
    canvas_px_per_mm: float = 1.5
    # table-plane region rasterised (x0, y0, x1, y1) in mm; outside it shows the floor
    canvas_extent_mm: tuple[float, float, float, float] = (-1080.0, -680.0, 1080.0, 680.0)
    # sprites are drawn this many times larger and area-downsampled (anti-aliasing)
    supersample: int = 4
    circle_points: int = 32
    # soft contact shadow under objects: blur and darkening (0..1)
    shadow_blur_mm: float = 2.5
    shadow_spread_mm: float = 1.5
    shadow_strength: float = 0.5
    hand_shadow_blur_mm: float = 14.0
    hand_shadow_strength: float = 0.35
    # alpha above which a sprite pixel belongs to the object (visibility masks)
    mask_alpha: float = 0.5
    # sprite cache sizes (a hand sprite is ~2 MB, a tile ~20 kB)
    max_sprites: int = 2048
    max_hand_sprites: int = 24
    # sensor noise comes from a fixed pool of Gaussian noise, cropped at a random offset
    noise_pool_seed: int = 20240611
    noise_pool_margin_px: int = 64
    noise_pool_sigma: float = 24.0
    # the lighting gain map is computed at 1/this of the image size and upsampled
    lighting_downscale: int = 16
    # stored gain = gain * gain_scale in uint8 (so gains up to 255 / gain_scale)
    gain_scale: float = 100.0
    sizes: Sizes = Sizes()


DEFAULT_SETTINGS = RenderSettings()
