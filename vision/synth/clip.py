"""Render a scripted round to an mp4 with per-frame ground truth.

Writes into ``out_dir``:

- ``clip.mp4``: the camera's resolution (1920x1080 unless the look family says otherwise),
  ``fps`` frames per second; H.264 unless the set's ``sensor.codecs`` name ``mpeg4`` (MPEG-4
  Part 2 at a sampled bit rate) or ``mjpeg`` (Motion JPEG, also in the mp4 container: PyAV and
  OpenCV read it back);
- ``truth.jsonl.gz``: one line per frame ``{"frame", "time_s", "blind", "objects": [...]}``, each
  object with ``id``, ``class``, ``face``, ``face_up``, ``die_value``, ``die_flat``, ``xyxy``,
  ``obb``, ``zone``, ``visibility`` in image pixels;
- ``scenario.json``: seed, injections, the plan (dice, first box, expected and actual delivery,
  settings), ground-truth ``events`` and ``irregularities`` (kind, box, time window), the camera
  and the layout zones in image pixels (of the table the look sampled: arc, row or two rows),
  the randomisation set's name and the video encoding.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import asdict, dataclass, replace
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
from tqdm import tqdm

from vision.synth.config import DomainRandomisation, randomisation
from vision.synth.render import Renderer
from vision.synth.round_plan import RoundPlan, plan_round
from vision.synth.sampling import choice, sample_hand, sample_look, uniform
from vision.synth.scenario import ScenarioTiming, Scripted
from vision.synth.scenario_deal import script_round
from vision.synth.scene import ObjectTruth, Scene
from vision.synth.table import default_layout, layout_dict

DEALER_HANDS = (900, 901, 902)
# the encoding is drawn from its own generator, seeded [seed, this]: no other draw moves
_ENCODING_STREAM = 7
# PyAV encoder names and pixel formats of the codecs a set can name
ENCODERS = {"h264": ("libx264", "yuv420p"), "mpeg4": ("mpeg4", "yuv420p")}
ENCODERS |= {"mjpeg": ("mjpeg", "yuvj420p")}


@dataclass(frozen=True)
class ClipConfig:
    """Encoding and appearance of a scenario clip."""

    randomisation: str = "training"
    crf: int = 26  # H.264 quality: lower is better and bigger
    preset: str = "veryfast"
    scale: float = 1.0  # < 1 renders smaller frames (tests); 1.0 is the camera's resolution


@dataclass(frozen=True, slots=True)
class VideoEncoding:
    """The codec of one clip; ``bit_rate`` for mpeg4 (bits/s), ``qscale`` for mjpeg."""

    codec: str = "h264"
    bit_rate: int = 0
    qscale: int = 0


def sample_encoding(seed: int, dr: DomainRandomisation) -> VideoEncoding:
    """The codec of clip ``seed`` (from its own generator: the look's draws do not move)."""
    sensor = dr.sensor
    if sensor.codecs == ("h264",):
        return VideoEncoding()
    rng = np.random.default_rng([seed, _ENCODING_STREAM])
    codec = choice(rng, sensor.codecs)
    return VideoEncoding(
        codec,
        bit_rate=round(uniform(rng, sensor.mpeg4_bit_rate)) if codec == "mpeg4" else 0,
        qscale=round(uniform(rng, sensor.mjpeg_qscale)) if codec == "mjpeg" else 0,
    )


def add_video_stream(container, enc: VideoEncoding, cfg: ClipConfig, fps: int, size_wh):
    """A video stream of the PyAV output ``container`` for ``enc``, ``size_wh`` (even) px."""
    name, pix_fmt = ENCODERS[enc.codec]
    stream = container.add_stream(name, rate=Fraction(fps))
    stream.width, stream.height, stream.pix_fmt = *size_wh, pix_fmt
    match enc.codec:
        case "h264":
            stream.options = {"crf": str(cfg.crf), "preset": cfg.preset}
        case "mpeg4":
            stream.bit_rate = enc.bit_rate
        case "mjpeg":
            stream.options = {"qmin": str(enc.qscale), "qmax": str(enc.qscale)}
    return stream


def _base_scene(seed: int, dr: DomainRandomisation, scale: float) -> Scene:
    look = sample_look(np.random.default_rng(seed), dr)
    cam = look.camera
    if scale != 1.0:
        w, h = cam.resolution_wh
        cam = replace(
            cam,
            resolution_wh=(round(w * scale) // 2 * 2, round(h * scale) // 2 * 2),
            px_per_mm=cam.px_per_mm * scale,
        )
    return Scene(
        chung_box=1,
        camera=cam,
        table=look.table,
        tile_look=look.tile_look,
        effects=look.effects,
        light_dir=look.light_dir,
        dice_look=look.dice,
        layout=look.layout,
        chip_style=look.chip_style,
    )


def _hand_looks(scripted: Scripted, seed: int, dr: DomainRandomisation) -> None:
    rng = np.random.default_rng(seed + 1)
    dealer = sample_hand(rng, dr, 0, (0.0, 0.0), from_dealer=True)
    for obj in scripted.director.hands:
        if obj in DEALER_HANDS:
            look = replace(dealer, obj_id=obj, left=obj == DEALER_HANDS[0], angle_deg=0.0)
        else:
            look = sample_hand(rng, dr, obj, (0.0, 0.0), from_dealer=False)
        scripted.director.hand_looks[obj] = look


def _object_json(o: ObjectTruth) -> dict:
    return {
        "id": o.obj_id,
        "class": o.kind,
        "face": o.face,
        "face_up": o.face_up,
        "die_value": o.die_value,
        "die_flat": o.die_flat,
        "chips": o.chips,
        "xyxy": [round(v, 1) for v in o.xyxy],
        "obb": [[round(x, 1), round(y, 1)] for x, y in o.obb_px],
        "zone": o.zone,
        "visibility": round(o.visibility, 3),
        "level": o.level,
    }


def _blind_state(scripted: Scripted, frame: int) -> str | None:
    for start, end, variant in scripted.blind:
        if start <= frame < end:
            return variant
    return None


def _plan_json(plan: RoundPlan) -> dict:
    d = asdict(plan)
    d["settings"] = {str(k): v for k, v in plan.settings.items()}
    d["house_way_settings"] = {str(k): v for k, v in plan.house_way_settings.items()}
    d["wagers"] = {str(k): v for k, v in plan.wagers.items()}
    d["outcomes"] = {str(k): v for k, v in plan.outcomes.items()}
    return d


def render_scenario(
    seed: int,
    injections: tuple[str, ...],
    out_dir: Path,
    cfg: ClipConfig | None = None,
    timing: ScenarioTiming | None = None,
    progress: bool = True,
) -> dict:
    """Plan, script, render and encode one round; returns the scenario summary it wrote."""
    cfg, timing = cfg or ClipConfig(), timing or ScenarioTiming()
    out_dir.mkdir(parents=True, exist_ok=True)
    dr = randomisation(cfg.randomisation)
    plan = plan_round(seed, injections)
    base = _base_scene(seed, dr, cfg.scale)
    layout = default_layout(base.layout)
    encoding = sample_encoding(seed, dr)
    scripted = script_round(plan, base, layout, timing)
    _hand_looks(scripted, seed, dr)
    renderer = Renderer(layout=layout)
    camera = None
    w, h = base.camera.resolution_wh
    with (
        av.open(str(out_dir / "clip.mp4"), "w") as container,
        gzip.open(out_dir / "truth.jsonl.gz", "wt", encoding="utf-8") as truth,
    ):
        stream = add_video_stream(container, encoding, cfg, timing.fps, (w, h))
        last = None
        frames = range(scripted.n_frames)
        for f in tqdm(frames, desc=f"render seed {seed}", unit="frame", disable=not progress):
            blind = _blind_state(scripted, f)
            scene = replace(
                scripted.director.scene(f),
                effects=replace(base.effects, noise_seed=seed * 100_003 + f),
            )
            result = renderer.render(scene)
            camera = result.camera
            image = result.image
            if blind == "blank":
                image = np.zeros_like(image)
            elif blind == "frozen" and last is not None:
                image = last
            last = image
            frame = av.VideoFrame.from_ndarray(image, format="bgr24")
            container.mux(stream.encode(frame))
            objects = [] if blind else [_object_json(o) for o in result.objects]
            truth.write(
                json.dumps(
                    {
                        "frame": f,
                        "time_s": round(f / timing.fps, 4),
                        "blind": blind,
                        "objects": objects,
                    }
                )
                + "\n"
            )
        container.mux(stream.encode(None))
    summary = {
        "seed": seed,
        "injections": list(injections),
        "variant": plan.variant,
        "fps": timing.fps,
        "n_frames": scripted.n_frames,
        "resolution_wh": [w, h],
        "plan": _plan_json(plan),
        "events": scripted.events,
        "irregularities": scripted.irregularities,
        "blind_intervals": [list(b) for b in scripted.blind],
        "chip_values": {str(k): v for k, v in sorted(scripted.chip_values.items())},
        "layout": layout_dict(layout, camera),
        "randomisation": dr.name,
        "scale": cfg.scale,
        "video": asdict(encoding),
    }
    (out_dir / "scenario.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
    return summary
