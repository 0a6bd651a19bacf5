"""Write ``models/<name>.md`` model cards from the manifest, the recipes, the training logs and
``models/metrics.json`` (made by ``scripts/evaluate_models.py``).

    python scripts/model_card.py
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "models"
# Training stages of each shipped model, in order (a later stage starts from the earlier weights).
RECIPES = {
    "detector": [
        "datasets/recipes/train_detector.yaml",
        "datasets/recipes/train_detector_finetune.yaml",
        "datasets/recipes/train_gpu.yaml",
    ],
    "faces": [
        "datasets/recipes/train_gpu.yaml",
        "datasets/recipes/train_faces_looks5.yaml",
        "datasets/recipes/train_faces_backs.yaml",
        "datasets/recipes/train_faces_backs_video.yaml",
    ],
    "faces_down": ["datasets/recipes/train_gpu.yaml", "datasets/recipes/train_faces_down.yaml"],
    "dice": [
        "datasets/recipes/train_gpu.yaml",
        "datasets/recipes/train_dice.yaml",
        "datasets/recipes/train_dice_close.yaml",
        "datasets/recipes/train_dice_steep.yaml",
    ],
}
GPU_RECIPE = "datasets/recipes/train_gpu.yaml"
WHERE = {  # where each recipe ran
    "datasets/recipes/train_detector.yaml": "CPU, 2 cores",
    "datasets/recipes/train_detector_finetune.yaml": "CPU, 2 cores",
    "datasets/recipes/train_faces_down.yaml": "CPU, 2 cores",
    "datasets/recipes/train_dice.yaml": "CPU, 2 cores",
    "datasets/recipes/train_dice_close.yaml": "CPU, 2 cores",
    "datasets/recipes/train_dice_steep.yaml": "CPU, 2 cores",
    "datasets/recipes/train_faces_looks5.yaml": "CPU, 2 cores",
    "datasets/recipes/train_faces_backs.yaml": "CPU, 2 cores",
    "datasets/recipes/train_faces_backs_video.yaml": "CPU, 2 cores",
    GPU_RECIPE: "one NVIDIA H200, `scripts/train_gpu.py run`",
}
DATA = """Data: `paigow synth stills` (recipe `datasets/recipes/stills.yaml`): train 800 scenes
(seed index 0 of the train range, seeds 0..799), val 100 (val range), held-out test 150 (test
range, seeds 2,000,000,000..149) and shifted 150 (shifted range and randomisation set: other felt
colours, tilt 15-25 deg, stronger glare and noise); no test or shifted scene shares a seed with a
training scene. Converted by `scripts/build_datasets.py`."""
GPU_DATA = """`scripts/train_gpu.py` (recipe `datasets/recipes/train_gpu.yaml`): frames of 40
rendered training rounds (`paigow synth scenario`, seeds 60000-60039, clean and with every
injectable irregularity; never the standard suite's seeds), one in 12 scaled to 960x540 (2,360
frames, 3 rounds kept for validation), face crops cut from their full-resolution frames (6,031:
tiles once per 36 frames, dice per 3, tipped dice every frame), plus 2,400 fresh stills (train
range, seed indices 20-35) and 150 validation stills with their face crops."""

FACES_DOWN_DATA = """`scripts/train_faces_down.py` (recipe
`datasets/recipes/train_faces_down.yaml`): the stage-1 weights with a 29th output row,
`tile_down` (a face-down tile: the reader can then overrule a detector that calls a face-up
tile face down, `vision.faces.turned_up`), fine-tuned on crops of 41 rendered training rounds
(seeds 60000-60041, never the standard suite): face-down tiles at least 70% visible (woodpile
stack tops included; 2,700 train, 450 val) and the face classes (16,692 train with the still
crops, 443 val), one crop per object per 36 frames; validation rounds r_60000-r_60002, test
round r_60041 (342 face-down, 163 face crops)."""


FLOAT_VS_INT8 = (
    "Float against int8, side by side (2026-11-30): on rendered video (the 12 rounds above, "
    "`--detector detector` for the float file) mAP50 0.968 for both, mAP50-95 0.821 against "
    "0.820 (die AP50 0.968 against 0.969); on the 24 stills of tests/golden/models.json the "
    "same AP50 (0.988) and mAP50-95 0.878 against 0.874; on the held-out stills mAP50 0.990 "
    "against 0.988; every clear ultralytics box matched at IoU 0.9 on tests/data/parity by "
    "both. Inference on 2 cores (onnxruntime, same inputs, alternating runs, other jobs "
    "running): 1.6-2.0x faster (960x544: 199 against 126 ms; 640x640: 175 against 87 ms; "
    "640x320: 111 against 60 ms)."
)
LIMITS = {
    "detector": (
        "Known limits: dice are about 9 px at the detector's scale, so their boxes are loose; "
        "the monitor re-measures die boxes on the full-resolution frame (`vision/refine.py`: "
        "the bright blob at the detection, opened to cut it from felt lettering, each edge "
        "kept within 30% of the detector's; settings chosen on the validation split; included "
        "in the figures above). The shifted split (other felts, strong tilt and glare) stays "
        "below the held-out split: shifted-style looks are never trained on, so it measures how "
        "far the detector carries to tables it has not seen. One factor of it at a time (80 "
        "stills each, `datasets/recipes/shift_factors/`, the network alone): the felt colour "
        "takes mAP50 from 0.990 to 0.675 (dice 0.169), the camera's tilt 0.981, the lighting "
        "0.984, the sensor 0.991. So the monitor shows an unknown felt to the network as the "
        "nearest trained one (`vision/felt.py`; the trained felts are the manifest's "
        "`felts_bgr`; a trained felt is left as it is, as are the demo and 29 of the 32 "
        "standard suite rounds): on the felt-only stills 0.959, on the shifted split 0.800 "
        "against 0.577 for the network alone (die 0.617 against 0.126; `--no-felt`), the "
        "held-out split unchanged. Its settings were chosen on a third set of felts "
        "(`tune.yaml`: 0.763 -> 0.968), never on the shifted split. "
        "Tile backs likewise (`TileBacks` in `vision/felt.py`; the trained backs, the "
        "training look's dark greys, are the manifest's `backs_bgr`): the colour of a table's "
        "backs is learnt from the face-down tiles found, and backs unlike the trained ones are "
        "shown as the nearest; on stills of two looks whose backs the network never saw (30 "
        "each, one table each), navy backs found face down 0.48 -> 0.73, green 0.74 -> 0.97. "
        "Stage 3 (whole frames at 960 px, rendered video) raised video mAP50 from 0.891 to "
        "0.974 and shifted mAP50 from 0.386 to 0.570 over stage 2. Its time budget was 5 "
        "minutes (18 epochs), and validation mAP50-95 was still rising. "
        "Light tiles are not learnt: on the held-out `ivory_olive_spots` (ivory tiles with "
        "black and red pips, rendered video, session 44) the network alone finds none (tiles "
        "AP50 0.0, the tiles read as chips). The monitor shows a table of light tiles to it "
        "as dark tiles with light pips once its woodpile has shown the tiles are light "
        "(`vision/light_tiles.py`, docs/detection.md): tiles AP50 face down / up 0.53 / 0.65 "
        "on that family (docs/measurements.md, session 45)."
    ),
    "faces": (
        "Known limits: the 28th class, die_tipped, is a die not lying flat (two faces show); "
        "a die reads die_tipped only when that is its most probable class at 0.7 or more, "
        "else its most probable value (`vision.faces.die_choice`, as the figures above are "
        "measured). On the shifted split's tilted cameras (15-25 deg) flat dice show their "
        "sides too and many read as tipped (dice accuracy there 0.84, against 0.92 for the "
        "earlier 27-class reader trained on stills only, which could not tell a tipped die): "
        "a strongly tilted camera needs its own training looks before dice_not_flat can be "
        "trusted on it. Tiles: errors are mostly a neighbour's half in the crop (1-3 read "
        "1-2). Trained 21 epochs in a 4.5-minute budget."
    ),
}


def _stage(path: str, name: str) -> tuple[str, str]:
    recipe = yaml.safe_load((ROOT / path).read_text())
    faces_on_gpu = path == GPU_RECIPE and name == "faces"
    runs = [recipe["faces_name"] if faces_on_gpu else recipe["name"]]
    runs += [recipe["second_run"]["name"]] if "second_run" in recipe else []
    model = recipe["faces_model"] if faces_on_gpu else recipe["model"]
    epochs, seconds = 0, 0.0
    for run in runs:
        results = ROOT / recipe["project"] / run / "results.csv"
        if not results.exists():
            return f"`{path}`: no results.csv", model
        rows = list(csv.DictReader(results.read_text().splitlines()))
        times = [float(r.get("time") or 0) for r in rows]
        # "time" is cumulative within one run and restarts when training is resumed
        seconds += sum(t - p if t > p else t for p, t in zip([0.0, *times], times, strict=False))
        epochs += len(rows)
    return f"{epochs} epochs in {seconds / 60:.0f} min (`{path}`, {WHERE[path]})", model


def _training(name: str) -> tuple[str, str]:
    """What each training stage did, and the model YAML the first stage built."""
    stages = [_stage(p, name) for p in RECIPES[name]]
    return " then ".join(text for text, _ in stages), stages[0][1]


def _detector_table(metrics: dict) -> list[str]:
    lines = [
        "| class | test AP50 | test AP50-95 | shifted AP50 | shifted AP50-95 | test n |",
        "|---|---|---|---|---|---|",
    ]
    test, shifted = metrics["test"]["detection"], metrics["shifted"]["detection"]
    for cls in test:
        t, s = test[cls], shifted[cls]
        lines.append(
            f"| {cls} | {t['ap50']:.3f} | {t['ap50_95']:.3f} | {s['ap50']:.3f} | "
            f"{s['ap50_95']:.3f} | {t['instances']} |"
        )
    return lines


def _faces_table(metrics: dict) -> list[str]:
    lines = [
        "| kind | test accuracy | test n | shifted accuracy | shifted n |",
        "|---|---|---|---|---|",
    ]
    for kind in ("tile", "die"):
        t, s = metrics["test"]["faces"][kind], metrics["shifted"]["faces"][kind]
        lines.append(
            f"| {kind} | {t['accuracy']:.4f} | {t['n']} | {s['accuracy']:.4f} | {s['n']} |"
        )
    return lines


def _video_table(name: str) -> list[str]:
    """Figures on rendered video (``evaluate_models.py --suite``), when they were measured."""
    path = MODELS / "metrics_video.json"
    if not path.exists():
        return []
    video = json.loads(path.read_text())["video"]
    head = [
        f"On rendered video (`scripts/evaluate_models.py --suite .cache/suite/std --rounds "
        f"{' '.join(video['rounds'])} --out models/metrics_video.json`: rounds of the standard "
        "suite, never trained on; detection on one frame in 25, faces cut as the monitor cuts "
        "them):",
        "",
    ]
    if name == "detector":
        rows = [
            f"| {c} | {v['ap50']:.3f} | {v['ap50_95']:.3f} | {v['instances']} |"
            for c, v in video["detection"].items()
        ]
        return [*head, "| class | AP50 | AP50-95 | n |", "|---|---|---|---|", *rows, ""]
    f = video["faces"]
    return [
        *head,
        "| kind | n | accuracy | read at the tracker's threshold | right when read |",
        "|---|---|---|---|---|",
        *(
            f"| {k} | {f[k]['n']} | {f[k]['accuracy']:.4f} | {f[k]['kept']:.4f} | "
            f"{f[k]['kept_accuracy']:.4f} |"
            for k in ("tile", "die")
        ),
        "",
        f"Tipped dice ({f['die_tipped']['n']} crops) read as a flat die's value: "
        f"{f['die_tipped']['taken_for_flat']:.4f}.",
        "",
    ]


def card(name: str, entry: dict, metrics: dict) -> str:
    trained, model_yaml = _training(name)
    lat = metrics["latency"]
    speed = (
        f"{lat['detector_ms_per_1080p_frame']:.1f} ms per 1080p frame (resize to 960x540, "
        "letterbox 960x544, inference, decode, die boxes re-measured)"
        if name == "detector"
        else f"{lat['face_reader_ms_per_crop']:.2f} ms per crop (batch 1)"
    )
    table = _detector_table(metrics) if name == "detector" else _faces_table(metrics)
    return "\n".join(
        [
            f"# Model card: `{entry['file']}`",
            "",
            f"- Task: {entry['task']}; architecture `{model_yaml}` (ultralytics), trained from "
            "scratch (no pretrained weights, nothing downloaded).",
            f"- Input: {entry['input_wh'][0]}x{entry['input_wh'][1]} RGB in [0, 1]"
            + (
                ", the 1080p frame scaled by 0.5 and letterboxed (grey 114)."
                if name == "detector"
                else ", a square crop of the full-resolution frame around the detection "
                "(`vision.faces.crop_square`)."
            ),
            f"- Classes ({len(entry['classes'])}): {', '.join(entry['classes'])}.",
            f"- Recipes: {', '.join(f'`{r}`' for r in RECIPES[name])}. "
            + (f"Stages 1-2: {DATA} Stage 3: {GPU_DATA}" if name == "detector" else GPU_DATA),
            f"- Training: {trained}.",
            f"- sha256: `{entry['sha256']}`",
            f"- Latency (median, onnxruntime, 2 threads, this machine): {speed}.",
            "",
            "## Metrics (`scripts/evaluate_models.py`, ONNX path as the monitor runs it)",
            "",
            *table,
            "",
            *_video_table(name),
            LIMITS[name],
            "",
            "Reproduce: "
            + (
                "`python scripts/train.py RECIPE` for the first two recipes, then "
                if name == "detector"
                else ""
            )
            + "`python scripts/train_gpu.py render` (the training rounds), "
            "`python scripts/train_gpu.py pack --clips .cache/train_clips/r_* --out .gpu/data`, "
            "`python3 scripts/train_gpu.py run --data .gpu/data --weights STAGE2.pt --out OUT` on "
            f"a GPU machine, then `python scripts/export.py {name} <best.pt>`, "
            "`python scripts/evaluate_models.py` (with and without `--suite`), "
            "`python scripts/model_card.py`.",
            "",
        ]
    )


def _runtime_files(name: str, manifest: dict, metrics: dict) -> list[str]:
    """Lines on the quantized files made from ``name`` (``scripts/quantize.py``)."""
    out = []
    for other, entry in manifest.items():
        source = entry.get("quantized_from")
        if not source or source["file"] != manifest[name]["file"]:
            continue
        out += [
            f"## Runtime file: `{entry['file']}` (int8)",
            "",
            f'The monitor runs `{entry["file"]}` (`DetectorConfig.model = "{other}"`), made '
            f"by `python scripts/quantize.py` from `{source['file']}` (sha256 "
            f"`{source['sha256'][:16]}...`): onnxruntime static quantization (QDQ), weights "
            "int8 per channel, activations uint8 (min-max) calibrated on "
            f"{entry['calibration']}; the head's box decoding and each head branch's last "
            f"convolution stay in float. sha256 `{entry['sha256']}`. "
            + (
                f"The metrics and latency above are of this file ({metrics['detector_model']})."
                if metrics.get("detector_model") == other
                else ""
            ),
            "",
            FLOAT_VS_INT8,
            "",
        ]
    return out


def _down_check(name: str, manifest: dict) -> list[str]:
    """Lines on the face-down check fine-tuned from ``name`` (``scripts/train_faces_down.py``)."""
    entry = manifest.get("faces_down")
    if name != "faces" or entry is None:
        return []
    trained, _ = _stage(RECIPES["faces_down"][1], "faces_down")
    figures = json.loads((MODELS / "metrics_faces_down.json").read_text())
    rows = [
        f"| {split} | {f['face_down_n']} | {f['face_down_turned_up']:.4f} | "
        f"{f['face_up_tiles_n']} | {f['face_up_turned_up']:.4f} | "
        f"{f['face_up_turned_up_right']:.4f} |"
        for split, f in ((s, figures[s]) for s in ("test", "val"))
    ]
    return [
        f"## Face-down check: `{entry['file']}`",
        "",
        f"The monitor's `FaceReader` reads the detector's face-down boxes with a second model, "
        f"`{entry['file']}` (manifest entry `faces_down`, {len(entry['classes'])} classes: the "
        f"28 above and `{entry['classes'][-1]}`); a box it reads as a tile face at "
        f"{figures['threshold']} or more is face up (`vision.faces.turned_up`), and it reads "
        "the detector's face-up boxes too: one it reads as `tile_down` at 0.9 or more keeps no "
        "face (`vision.faces.read_as_back`: the models disagree, the face is unknown). Stage 2: "
        f"{FACES_DOWN_DATA} Training: {trained}. sha256 `{entry['sha256']}`.",
        "",
        "Measured by `python scripts/train_faces_down.py measure` (held-out crops; the val "
        "rounds chose the best epoch):",
        "",
        "| crops | face-down n | face-down turned up | face-up tiles n | turned up | turned up "
        "with the right face |",
        "|---|---|---|---|---|---|",
        *rows,
        "",
        "The 28-class reader, given the same face-down crops, read 68-70% of them as some face "
        "at 0.9 or more: it could not be used so. The check also reads the face classes but "
        "does not replace the reader: a 29-class reader for everything unlearned die_tipped "
        "(109 crops among 17,455; 17 of 19 tipped dice on rendered video read as a value), "
        "and with those crops repeated 8 times it took flat dice for tipped ones (5 "
        "dice_not_flat alerts, 3 false, on the standard suite).",
        "",
    ]


def _die_reader(name: str, manifest: dict) -> list[str]:
    """Lines on the die reader trained from ``name``'s features (``train_dice.yaml``)."""
    entry = manifest.get("dice")
    real_path = MODELS / "metrics_real_dice.json"
    if name != "faces" or entry is None or not real_path.exists():
        return []
    trained = " then ".join(_stage(r, "dice")[0] for r in RECIPES["dice"][1:])
    real = json.loads(real_path.read_text())
    rows = [
        f"| {size} | {f['n']} | {f['right']} | {f['wrong']} | {f['unread']} | {f['tipped']} | "
        f"{f['accuracy']:.4f} |"
        for size, f in real["sizes"].items()
    ]
    return [
        f"## Die reader: `{entry['file']}`",
        "",
        f"The monitor's `FaceReader` reads dice with a model of their own, `{entry['file']}` "
        f"(manifest entry `dice`, {len(entry['classes'])} classes: {', '.join(entry['classes'])}"
        "), so that reading dice of many designs never trades against reading tiles; it reads "
        "as the face reader did (`vision.faces.die_choice`: die_tipped at 0.7 or more, else the "
        "most probable value). The dice rows of the tables above are the face reader's (measured "
        "before the die reader shipped); the die reader's own are below and in "
        "`docs/measurements.md` (2026-12-05). "
        "Architecture and input as above: the face reader's features (`scripts/weights_from_"
        "onnx.py faces --calibrate`) under a new head. Data (`scripts/make_die_crops.py`, "
        "recipe `datasets/recipes/train_dice.yaml`): die crops of 3,220 stills of the training "
        "look and the six training families, each scene's dice of a design drawn for it "
        "(`varied`: white, ivory, red, green, blue, black and yellow bodies, dark, white or "
        "coloured pips), a tipped die in one scene in 5, every still turned into its table "
        "view; and the real dice photographs' train part at 9-24 px (the check part below is "
        "never trained on); then (`datasets/recipes/train_dice_close.yaml`) the same crops and "
        "die crops of 1,050 stills of the seven looks under a nearer, steeper camera (1400-2200 "
        "mm, tilt up to 20 degrees: flat dice show a side with pips), cut from the still "
        "itself; then (`datasets/recipes/train_dice_steep.yaml`) those crops and die crops of "
        "1,050 stills of the seven looks under a camera nearer and always steep (1300-2000 mm, "
        "tilt 14-26 degrees); no held-out family. "
        f"Training: {trained}. sha256 `{entry['sha256']}`.",
        "",
        f"Real dice photographs, check part (`python scripts/real_dice.py --out "
        f"models/metrics_real_dice.json`: {real['split']['check']} photographs, "
        f"{real['dice']} dice, each photograph shrunk so the die spans the size; right = the "
        f"label's value at {real['min_die_confidence']} or more):",
        "",
        "| die px | n | right | wrong | unread | tipped | accuracy |",
        "|---|---|---|---|---|---|---|",
        *rows,
        "",
    ]


def main() -> int:
    manifest = json.loads((MODELS / "manifest.json").read_text())
    metrics = json.loads((MODELS / "metrics.json").read_text())
    for name, entry in manifest.items():
        if "quantized_from" in entry or name in ("faces_down", "dice"):  # in its source's card
            continue
        runtime = _runtime_files(name, manifest, metrics) + _down_check(name, manifest)
        runtime += _die_reader(name, manifest)
        text = card(name, entry, metrics) + "\n".join(["", *runtime])
        (MODELS / f"{name}.md").write_text(text)
        print(f"wrote models/{name}.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
