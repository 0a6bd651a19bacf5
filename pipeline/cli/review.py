"""``paigow review VIDEO --out DIR`` and ``paigow demo``: post-incident review of a recording.

``review`` runs the whole pipeline on a recorded video with a progress bar (stderr), prints each
alert as it is raised (stdout) and a short summary at the end, and leaves events, alerts,
snapshots, an annotated video and a report page in DIR (:mod:`pipeline.review`). ``demo`` does
the same on the sample round shipped in ``datasets/samples/demo_round`` and publishes the alerts
on the bus as a monitor would, so ``paigow alerts`` in another terminal sees them live. Both take
``--config FILE`` (:mod:`pipeline.settings`): the pipeline's settings, the review's and, for the
demo, the bus endpoints; an option given overrides the file.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.bus.endpoints import PUB_ENDPOINT, REPLAY_ENDPOINT
from pipeline.cli.common import UsageError, add_settings_options, check_size, settings_of

if TYPE_CHECKING:
    from pipeline.settings import Settings

DEMO_DIR = Path(__file__).resolve().parents[2] / "datasets" / "samples" / "demo_round"
DEMO_STRIDE = 2  # the demo reads every 2nd frame (12.5 fps, motion-gated detector): about a
# minute on 2 cores; 5 fps misses exposures and misreads faces (false alerts at stride 5)
DEFAULT_TABLE = "T1"
STILL_STRIDE = 8  # ReviewConfig.still_stride, repeated (and tested equal) so that building the
# parser imports no video stack
SCENARIO_FILE = "scenario.json"
RUN_FLAGS = {"stride": "review.stride", "still_stride": "review.still_stride"}
REVIEW_FLAGS = {**RUN_FLAGS, "layout": "layout", "table": "table"}
DEMO_FLAGS = {**RUN_FLAGS, "pub": "bus.pub_endpoint", "replay": "bus.replay_endpoint"}
"""Each option -> the setting it overrides when given."""
DEMO_PRESET = {"review": {"stride": DEMO_STRIDE}}  # under --config: a file may change it


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "review",
        help="review a recorded video: events, alerts, snapshots, annotated video, report page",
        description="Run the pipeline on a recorded video and write what an investigator reads "
        "into DIR: events.jsonl, alerts.jsonl (+ journal.sqlite), snapshots/, annotated.mp4 and "
        "report.html. Unreadable stretches of a damaged file are reported, not fatal.",
    )
    p.add_argument(
        "video", type=Path, metavar="VIDEO", help="the recording (any format PyAV reads)"
    )
    p.add_argument("--out", type=Path, required=True, metavar="DIR", help="review folder")
    p.add_argument(
        "--layout",
        type=Path,
        metavar="L",
        help="the camera's layout YAML; default: the layout of a scenario.json beside VIDEO "
        "(a rendered clip's folder), else the packaged default layout",
    )
    p.add_argument(
        "--table", metavar="T", help=f"table id for the alerts (default {DEFAULT_TABLE})"
    )
    _run_options(p, stride=1)
    p.set_defaults(func=cmd_review)

    d = sub.add_parser(
        "demo",
        help="the whole pipeline on the bundled sample round: alerts live, a review folder",
        description="Run the whole pipeline with the shipped models on the sample round in "
        "datasets/samples/demo_round (31 s of 1080p video, three injected irregularities), "
        f"1 frame in {DEMO_STRIDE} by default to stay within about a minute on two cores. "
        "Alerts are printed as they are raised and published on the bus (follow them with "
        "`paigow alerts`); the review folder's report.html is named at the end.",
    )
    d.add_argument(
        "--out", type=Path, metavar="DIR", help="review folder (default: a new temporary folder)"
    )
    d.add_argument("--no-publish", action="store_true", help="do not publish alerts on the bus")
    d.add_argument(
        "--pub", metavar="ENDPOINT", help=f"PUB endpoint to bind (default {PUB_ENDPOINT})"
    )
    d.add_argument(
        "--replay", metavar="ENDPOINT", help=f"replay endpoint (default {REPLAY_ENDPOINT})"
    )
    _run_options(d, stride=DEMO_STRIDE)
    d.set_defaults(func=cmd_demo)


def _run_options(p: argparse.ArgumentParser, stride: int) -> None:
    add_settings_options(p)
    p.add_argument(
        "--stride",
        type=int,
        metavar="N",
        help=f"process every N-th frame (default {stride}); higher is faster and coarser",
    )
    p.add_argument(
        "--still-stride",
        type=int,
        metavar="N",
        help="while the picture stays still, process only every N-th frame, back to --stride as "
        f"soon as it changes (default {STILL_STRIDE}; N at most --stride: off)",
    )
    p.add_argument("--no-video", action="store_true", help="skip annotated.mp4 (faster)")
    p.add_argument(
        "--overwrite", action="store_true", help="replace the files of an earlier review in DIR"
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar, no alert lines")


def _layout(video: Path, layout_path: Path | None):
    """The layout to use and a line saying where it came from."""
    from pipeline.layout import layout_from_scenario, load_default_layout, load_layout

    if layout_path is not None:
        return load_layout(layout_path), str(layout_path)
    scenario = video.parent / SCENARIO_FILE
    if scenario.is_file():
        return layout_from_scenario(scenario), f"{scenario} (beside the video)"
    return load_default_layout(), "the packaged default layout"


def _prepare_out(out: Path, overwrite: bool) -> None:
    """Refuse a file as DIR, and an earlier review in it unless ``overwrite`` (then remove
    only the review's own files)."""
    from pipeline.review import JOURNAL_FILE, OUTPUT_FILES, SNAPSHOT_DIR

    if out.exists() and not out.is_dir():
        raise UsageError(f"{out}: not a folder")
    earlier = [out / name for name in (*OUTPUT_FILES, SNAPSHOT_DIR) if (out / name).exists()]
    if earlier and not overwrite:
        raise UsageError(f"{out}: holds an earlier review; choose another folder or --overwrite")
    for path in earlier:
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink()
    for extra in ("-wal", "-shm"):  # SQLite's side files of the journal
        (out / f"{JOURNAL_FILE}{extra}").unlink(missing_ok=True)


def _say_alert(alert) -> None:
    from tqdm import tqdm

    from pipeline.alerts import describe_alert

    tqdm.write(describe_alert(alert), file=sys.stdout)


def effective_settings(args: argparse.Namespace, flags: dict[str, str], preset=None) -> Settings:
    """The effective settings of a review or the demo (their strides checked first, so that a
    bad option is named as such)."""
    for name, option in (("stride", "--stride"), ("still_stride", "--still-stride")):
        given = getattr(args, name)
        if given is not None and given < 1:
            raise UsageError(f"{option} must be at least 1, got {given}")
    no_video = {"review": {"video_width_px": None}} if args.no_video else None
    return settings_of(args, flags, preset, no_video)


def _run(args: argparse.Namespace, settings: Settings, video: Path, out: Path, publish):
    from pipeline.review import probe_video, review

    info = probe_video(video)  # a missing file or a non-video fails before any work
    layout, source = _layout(video, settings.layout)
    check_size(layout, info.size_wh)
    _prepare_out(out, args.overwrite)
    config = settings.review_config(layout.chung_box)
    print(f"layout: {source}", file=sys.stderr)
    return review(
        video,
        out,
        layout,
        config,
        layout_source=source,
        publish=publish,
        on_alert=None if args.quiet else _say_alert,
        progress=not args.quiet,
    )


def summary_lines(result) -> list[str]:
    """The short summary printed after a review."""
    from pipeline.alerts import AlertState
    from pipeline.review.report import REPORT_FILE, boxes_in_order
    from pipeline.round.events import DeliveryDone

    run = result.info
    notes = [f"1 in {run.stride}"] if run.stride > 1 else []
    if result.skipped_still:
        notes.append(f"{result.skipped_still} still frames skipped")
    every = f" ({'; '.join(notes)})" if notes else ""
    speed = run.read_until_s / run.wall_s if run.wall_s else 0.0
    lines = [
        f"reviewed {Path(run.video).name}: {run.duration_s:.1f} s of video, "
        f"{run.frames_processed} frames processed{every} in {run.wall_s:.1f} s "
        f"({speed:.2f}x real time)"
    ]
    served = [
        f"{' '.join(map(str, boxes_in_order(e.boxes)))} ({len(e.boxes)} groups)"
        for e in result.events
        if isinstance(e, DeliveryDone)
    ]
    opened = [a for a in result.alerts if a.state == AlertState.OPEN]
    kinds = sorted({a.kind for a in opened})
    lines.append(
        f"{len(result.events)} events; boxes served {'; '.join(served) or 'not seen'}; "
        f"{len(result.alerts)} alert messages, {len(opened)} irregularities"
        + (f": {', '.join(kinds)}" if kinds else "")
    )
    for gap in run.unreadable:
        lines.append(f"UNREADABLE {gap.start_s:.2f}-{gap.end_s:.2f} s: {gap.reason}")
    lines.append(f"report: {result.out_dir / REPORT_FILE}")
    return lines


def cmd_review(args: argparse.Namespace) -> int:
    result = _run(args, effective_settings(args, REVIEW_FLAGS), args.video, args.out, None)
    print("\n".join(summary_lines(result)))
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    video = DEMO_DIR / "clip.mp4"
    if not video.is_file():
        raise UsageError(f"{video}: the sample clip is missing (install from a source checkout)")
    settings = effective_settings(args, DEMO_FLAGS, DEMO_PRESET)
    out = args.out or Path(tempfile.mkdtemp(prefix="paigow-demo-"))
    publish = None
    if not args.no_publish:
        publish = settings.bus.build()
        pub, replay = publish.pub_endpoint, publish.replay_endpoint
        print(
            f"publishing alerts on {pub} (replay {replay}); "
            f"follow them with: paigow alerts --connect {pub} --replay {replay}",
            file=sys.stderr,
        )
    stride = settings.review.stride
    print(f"demo: the sample round, 1 frame in {stride}, into {out}", file=sys.stderr)
    try:
        result = _run(args, settings, video, out, publish)
    except ValueError as exc:
        if str(exc).startswith("cannot bind"):
            raise UsageError(f"{exc} (is a monitor running? try --no-publish)") from None
        raise
    print("\n".join(summary_lines(result)))
    return 0
