"""Turn a shipped ONNX model back into ultralytics weights, to fine-tune it (the ``train`` extra).

    python scripts/weights_from_onnx.py faces --out .cache/weights/faces.pt
    python scripts/weights_from_onnx.py detector --out .cache/weights/detector.pt

We keep no ``.pt`` files: ``models/`` holds ONNX only. An ultralytics export keeps the module
names of the network as the names of its weights, with each batch norm folded into the
convolution before it (a bias added). So the network is built again from its model YAML
(``yolo11n-cls.yaml`` or ``yolo11n.yaml``, nothing downloaded) and each convolution takes its
folded weight, its batch norm the identity plus the bias (running mean 0, variance 1 - eps,
scale 1), which computes the same function. The outputs of the rebuilt network are checked
against onnxruntime on random inputs before the checkpoint is written. Fine-tuning then starts
from what the monitor runs today instead of from random weights (a recipe's ``model:`` naming a
``.pt`` continues from its weights, ``scripts/train.py``).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
ARCHITECTURES = {"classify": "yolo11n-cls.yaml", "detect": "yolo11n.yaml"}
MAX_DIFFERENCE = 1e-3  # of any output, rebuilt network against onnxruntime


def _network(entry: dict):
    from ultralytics.nn.tasks import ClassificationModel, DetectionModel

    task = "detect" if entry["file"].startswith("detector") else "classify"
    build = DetectionModel if task == "detect" else ClassificationModel
    return task, build(ARCHITECTURES[task], nc=len(entry["classes"]), verbose=False)


def load_onnx_weights(net, path: Path) -> int:
    """Copy the folded weights of ``path`` into ``net``; returns how many tensors were set."""
    import onnx
    import torch
    from onnx import numpy_helper

    weights = {i.name: numpy_helper.to_array(i) for i in onnx.load(str(path)).graph.initializer}
    state = net.state_dict()
    set_count = 0
    with torch.no_grad():
        for name, value in weights.items():
            if name in state:
                state[name].copy_(torch.from_numpy(value.copy()))
                set_count += 1
                continue
            bn = name.removesuffix("conv.bias") + "bn"
            if name.endswith("conv.bias") and f"{bn}.bias" in state:
                eps = dict(net.named_modules())[bn].eps
                state[f"{bn}.bias"].copy_(torch.from_numpy(value.copy()))
                state[f"{bn}.weight"].fill_(1.0)
                state[f"{bn}.running_mean"].zero_()
                state[f"{bn}.running_var"].fill_(1.0 - eps)
                set_count += 1
    net.load_state_dict(state)
    return set_count


def calibrate_batch_norms(net, images: np.ndarray) -> int:
    """Give each batch norm the statistics of its convolution's output on ``images``
    ``(N, 3, H, W)`` float32 in [0, 1], keeping the function in inference mode.

    A folded network has no batch statistics: its batch norms as the identity plus the bias
    compute the right function in inference mode, but training normalises each convolution's
    output by the batch's mean and spread, which would rescale every layer at the first step.
    With the output's mean ``m`` and spread ``s`` measured on real inputs, the batch norm becomes
    scale ``s``, shift ``m + bias``, running mean ``m``, running variance ``s^2 - eps``: the same
    function in inference mode, and near it in training mode, where a batch's statistics are
    near ``m`` and ``s``. Returns how many batch norms were set.
    """
    import torch

    stats: dict[str, tuple] = {}
    hooks = []
    for name, module in net.named_modules():
        conv, bn = getattr(module, "conv", None), getattr(module, "bn", None)
        if isinstance(conv, torch.nn.Conv2d) and isinstance(bn, torch.nn.BatchNorm2d):

            def keep(_module, _inputs, output, name=name):
                flat = output.detach().transpose(0, 1).reshape(output.shape[1], -1)
                stats[name] = (flat.mean(dim=1), flat.var(dim=1))

            hooks.append(conv.register_forward_hook(keep))
    net.eval()
    with torch.no_grad():
        net(torch.from_numpy(images))
    for hook in hooks:
        hook.remove()
    modules = dict(net.named_modules())
    with torch.no_grad():
        for name, (mean, var) in stats.items():
            bn = modules[name].bn
            spread = torch.sqrt(var + bn.eps)
            bn.bias.copy_(mean + bn.bias)  # the bias was the folded one: shift = mean + bias
            bn.weight.copy_(spread)
            bn.running_mean.copy_(mean)
            bn.running_var.copy_(var)
    return len(stats)


def calibration_images(folder: Path, input_wh: tuple[int, int], n: int = 32) -> np.ndarray:
    """Up to ``n`` images found under ``folder`` (jpg/png), letterboxed to ``input_wh``, as a
    float32 batch in [0, 1] RGB."""
    from vision.detector import letterbox

    paths = sorted(p for p in folder.rglob("*") if p.suffix in (".jpg", ".png"))
    if not paths:
        raise SystemExit(f"weights_from_onnx: no images under {folder}")
    step = max(1, len(paths) // n)
    import cv2

    return np.concatenate([letterbox(cv2.imread(str(p)), input_wh)[0] for p in paths[::step][:n]])


def check_parity(net, name: str, input_wh: tuple[int, int]) -> float:
    """Largest output difference between ``net`` and the shipped model ``name`` as the monitor
    runs it (onnxruntime) on two random inputs."""
    import torch

    from vision.onnx import OnnxModel

    model = OnnxModel(name, threads=2)
    x = np.random.default_rng(0).random((2, 3, input_wh[1], input_wh[0]), dtype=np.float32)
    net.eval()
    with torch.no_grad():
        ours = net(torch.from_numpy(x))
    ours = (ours[0] if isinstance(ours, list | tuple) else ours).numpy()
    theirs = np.concatenate([model.run(x[i : i + 1]) for i in range(2)])
    return float(np.abs(ours - theirs).max())


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model", help="a manifest entry with a float ONNX file (faces, detector)")
    p.add_argument("--out", type=Path, required=True, help="the .pt checkpoint to write")
    p.add_argument(
        "--calibrate",
        type=Path,
        metavar="DIR",
        help="images (a training set) to give the batch norms their statistics: needed before "
        "training, else the first step rescales every layer",
    )
    p.add_argument(
        "--whole-frames",
        action="store_true",
        help="the detector is to train on whole scaled frames (the input size), not 416-px crops",
    )
    args = p.parse_args(argv)
    os.environ["YOLO_OFFLINE"] = "1"
    import torch

    from vision.onnx import load_manifest

    manifest = load_manifest()
    if args.model not in manifest:
        print(
            f"weights_from_onnx: no model named {args.model!r} in models/manifest.json",
            file=sys.stderr,
        )
        return 2
    entry = manifest[args.model]
    path = ROOT / "models" / entry["file"]
    task, net = _network(entry)
    count = load_onnx_weights(net, path)
    if args.calibrate:
        crops = task == "detect" and not args.whole_frames
        size = (416, 416) if crops else tuple(entry["input_wh"])
        norms = calibrate_batch_norms(net, calibration_images(args.calibrate, size))
        print(f"{norms} batch norms given the statistics of {args.calibrate}")
    net.names = dict(enumerate(entry["classes"]))
    difference = check_parity(net, args.model, tuple(entry["input_wh"]))
    if difference > MAX_DIFFERENCE:
        print(
            f"weights_from_onnx: rebuilt {args.model} differs from the ONNX file by "
            f"{difference:.2e} (more than {MAX_DIFFERENCE})",
            file=sys.stderr,
        )
        return 1
    args.out.parent.mkdir(parents=True, exist_ok=True)
    net.args = {"task": task, "imgsz": max(entry["input_wh"])}
    torch.save({"model": net.float(), "train_args": net.args, "epoch": -1}, args.out)
    print(f"{args.out}: {count} tensors from {path.name}, outputs within {difference:.1e}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
