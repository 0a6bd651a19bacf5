"""Render a scripted round to an H.264 mp4 with per-frame ground truth.

Writes into ``out_dir``:

- ``clip.mp4``: 1920x1080 (or the camera's resolution), ``fps`` frames per second, H.264;
- ``truth.jsonl.gz``: one line per frame ``{"frame", "time_s", "blind", "objects": [...]}``, each
  object with ``id``, ``class``, ``face``, ``face_up``, ``die_value``, ``die_flat``, ``xyxy``,
  ``obb``, ``zone``, ``visibility`` in image pixels;
- ``scenario.json``: seed, injections, the plan (dice, first box, expected and actual delivery,
  settings), ground-truth ``events`` and ``irregularities`` (kind, box, time window), the camera
  and the layout zones in image pixels.
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
from vision.synth.sampling import sample_hand, sample_look
from vision.synth.scenario import ScenarioTiming, Scripted
from vision.synth.scenario_deal import script_round
from vision.synth.scene import ObjectTruth, Scene
from vision.synth.table import default_layout, layout_dict

DEALER_HANDS = (900, 901, 902)


@dataclass(frozen=True)
class ClipConfig:
    """Encoding and appearance of a scenario clip."""

    randomisation: str = "training"
    crf: int = 26  # H.264 quality: lower is better and bigger
    preset: str = "veryfast"
    scale: float = 1.0  # < 1 renders smaller frames (tests); 1.0 is 1920x1080


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
    layout = default_layout()
    base = _base_scene(seed, dr, cfg.scale)
    scripted = script_round(plan, base, layout, timing)
    _hand_looks(scripted, seed, dr)
    renderer = Renderer(layout=layout)
    camera = None
    w, h = base.camera.resolution_wh
    with (
        av.open(str(out_dir / "clip.mp4"), "w") as container,
        gzip.open(out_dir / "truth.jsonl.gz", "wt", encoding="utf-8") as truth,
    ):
        stream = container.add_stream("libx264", rate=Fraction(timing.fps))
        stream.width, stream.height, stream.pix_fmt = w, h, "yuv420p"
        stream.options = {"crf": str(cfg.crf), "preset": cfg.preset}
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
        "layout": layout_dict(layout, camera),
    }
    (out_dir / "scenario.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
    return summary
