"""``paigow chips calibrate FRAME --values 1,5,25 --out chips.yaml``: a chip set from one frame.

The shipped detector finds the chip stacks in ``FRAME`` (through the table view of
``--layout`` when one is given, as the monitor runs it; on the frame as it is otherwise, as
``paigow detect`` does); :func:`vision.chip_calibration.calibrate` groups their top colours into
one cluster per value and writes a chip set :func:`vision.chips.load_chip_set` reads. Plain
values (``1,5,25``) go to the clusters lightest first; ``white=1,red=5,green=25`` gives each value
to the cluster nearest that colour. ``--png`` draws each cluster's stacks with its value, to
check (and edit the YAML) before the set is used. Every input is checked before the detector
runs; a bad one is one line on stderr, exit status 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pipeline.cli.common import UsageError, read_image


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("chips", help="chip sets: calibrate one from a frame")
    inner = p.add_subparsers(dest="chips_command", required=True, parser_class=type(p))
    c = inner.add_parser("calibrate", help="find the chip stacks in a frame and write a chip set")
    c.add_argument("frame", type=Path, metavar="FRAME", help="an image of the table with chips")
    c.add_argument(
        "--values",
        required=True,
        help="one value per denomination: 1,5,25 (lightest colour first) or white=1,red=5",
    )
    c.add_argument("--out", type=Path, required=True, help="chip set YAML to write")
    c.add_argument("--layout", type=Path, metavar="L", help="table layout YAML (the table view)")
    c.add_argument("--png", type=Path, help="write a picture of the clusters here")
    c.add_argument("--min-confidence", type=float, default=0.25)
    c.add_argument("--threads", type=int, default=2)
    c.set_defaults(func=cmd_calibrate)


def parse_values(text: str) -> list[int] | list[tuple[str, int]]:
    """``"1,5,25"`` -> ``[1, 5, 25]``; ``"white=1,red=5"`` -> ``[("white", 1), ("red", 5)]``.

    >>> parse_values("white=1, red=5")
    [('white', 1), ('red', 5)]
    """
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not parts:
        raise UsageError("--values: give one value per denomination, e.g. 1,5,25")
    named = ["=" in p for p in parts]
    if any(named) and not all(named):
        raise UsageError("--values: name every value (white=1,red=5) or none (1,5)")
    out = []
    for part in parts:
        name, _, number = part.rpartition("=")
        try:
            value = int(number)
        except ValueError:
            raise UsageError(f"--values: {number!r} is not a whole number") from None
        out.append((name.strip(), value) if any(named) else value)
    return out


def _writable(path: Path) -> None:
    if not path.parent.is_dir():
        raise UsageError(f"{path}: its folder does not exist")
    if path.is_dir():
        raise UsageError(f"{path}: is a folder")


def chip_boxes(image, layout_path: Path | None, min_confidence: float, threads: int):
    """``(N, 4)`` boxes (frame px) of the chip stacks the shipped detector finds in ``image``."""
    from pipeline.layout import load_layout
    from vision.detector import Detector, DetectorConfig, check_fits
    from vision.types import CHIP, Frame
    from vision.view import TableView, ViewConfig

    h, w = image.shape[:2]
    view = None
    if layout_path is not None:
        layout = load_layout(layout_path)
        view = TableView.fit(layout.zones_px, layout.tile_px, (w, h), ViewConfig())
        view = None if view.identity else view
    detector = Detector(DetectorConfig(min_confidence=min_confidence, threads=threads))
    seen = image if view is None else view.warp(image)
    check_fits((seen.shape[1], seen.shape[0]), detector.model.input_wh)
    det = detector(Frame("calibrate", 0, 0.0, seen))
    if view is not None:
        det = view.to_frame(det)
    return det.xyxy[det.class_id == CHIP]


def cmd_calibrate(args: argparse.Namespace) -> int:
    import cv2

    from vision.chip_calibration import calibrate, check_values, contact_sheet, look_alike
    from vision.chips import chip_set_yaml

    values = parse_values(args.values)
    check_values(values)
    image = read_image(args.frame)
    for path in (args.out, args.png):
        if path is not None:
            _writable(path)
    boxes = chip_boxes(image, args.layout, args.min_confidence, args.threads)
    result = calibrate(image, boxes, values)
    args.out.write_text(chip_set_yaml(result.chip_set))
    for c in result.clusters:
        print(f"{c.value:>8}  {c.name:<10} top BGR {list(c.top_bgr)}  {len(c.members)} stack(s)")
    print(f"{len(boxes)} chip stack(s) in {args.frame}; chip set written to {args.out}")
    for names in look_alike(result):
        print(
            f"paigow chips: warning: clusters {' and '.join(names)} have nearly one colour: "
            "does the frame show a stack of every denomination? Check the picture and the YAML",
            file=sys.stderr,
        )
    if args.png is not None:
        cv2.imwrite(str(args.png), contact_sheet(image, boxes, result))
        print(f"clusters drawn in {args.png}")
    return 0
