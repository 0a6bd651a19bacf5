"""Train the detector or the face reader from scratch with ultralytics (the ``train`` extra).

Nothing is downloaded: the network is built from a model YAML (no ``.pt`` weights), plots are
off, and ``YOLO_OFFLINE`` is set. Training is resumable: run the same command again and it
continues from ``last.pt``. Recipes (data, image size, epochs, augmentation) are in
``datasets/recipes/train_*.yaml``.

    python scripts/train.py datasets/recipes/train_detector.yaml
    python scripts/train.py datasets/recipes/train_faces.yaml
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def _data_yaml(recipe: dict) -> str:
    """Write the ultralytics data YAML for a detection recipe (absolute dataset path)."""
    if recipe["task"] != "detect":
        return str((ROOT / recipe["data"]).resolve())
    data = {
        "path": str((ROOT / recipe["data"]).resolve()),
        "train": "images/train",
        "val": "images/val",
        "test": "images/test",
        "names": dict(enumerate(recipe["names"])),
    }
    out = ROOT / recipe["data"] / "data.yaml"
    out.write_text(yaml.safe_dump(data, sort_keys=False))
    return str(out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Train from a recipe (resumable).")
    p.add_argument("recipe", type=Path)
    p.add_argument("--epochs", type=int, help="override the recipe's epochs")
    p.add_argument("--fresh", action="store_true", help="ignore last.pt and start again")
    args = p.parse_args(argv)
    os.environ["YOLO_OFFLINE"] = "1"
    recipe = yaml.safe_load(args.recipe.read_text())
    import torch
    from ultralytics import YOLO

    torch.set_num_threads(recipe.get("threads", os.cpu_count() or 1))
    run_dir = ROOT / recipe["project"] / recipe["name"]
    last = run_dir / "weights" / "last.pt"
    start = time.perf_counter()
    if last.exists() and not args.fresh:
        print(f"resuming {last}")
        YOLO(str(last)).train(resume=True)
    else:
        model = YOLO(recipe["model"], task=recipe["task"])
        model.train(
            data=_data_yaml(recipe),
            epochs=args.epochs or recipe["epochs"],
            project=str(ROOT / recipe["project"]),
            name=recipe["name"],
            exist_ok=True,
            # a YAML starts from random weights; a .pt of ours continues from its weights
            pretrained=str(recipe["model"]).endswith(".pt"),
            plots=False,
            amp=False,
            device="cpu",
            save_period=1,
            verbose=False,
            **recipe.get("train_args", {}),
        )
    print(f"trained in {(time.perf_counter() - start) / 60:.1f} min; weights in {run_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
