"""``paigow review RECORDING... --out DIR`` and ``paigow demo``: post-incident review.

``review`` of one recording runs the whole pipeline on it with a progress bar (stderr), prints
each alert as it is raised (stdout) and a short summary at the end, and leaves events, alerts,
snapshots, an annotated video and a report page in DIR (:mod:`pipeline.review`).

``review`` of several recordings, or of folders (each folder: the video files in it, sorted,
:data:`pipeline.review.batch.VIDEO_SUFFIXES`; else, unless it holds images, those of its
sub-folders), is a batch: each recording is reviewed exactly
so into ``DIR/NAME/`` (NAME: its file name without the extension; where two clash, the folder
it lies in before it), as Ray tasks, one per recording (:mod:`pipeline.cluster.batch`):
``--ray auto`` (the default) starts a local instance sized to the machine, ``--workers N``
reviews at most N at once (one at a time: in this process, no instance started), ``--ray
HOST:PORT`` joins a cluster. Without Ray installed it says
so in one line and reviews them one by one in this process (``--ray off``: on purpose). One
progress bar over the seconds of video of them all, a line as each finishes or fails (a failure
stops no other; exit status 1 when any failed), and ``DIR/index.html`` listing every recording,
rewritten as each ends. A recording whose folder holds ``done.json`` is done: the next run
skips it (``--overwrite``: reviews it again); an unfinished folder is reviewed again.

``demo`` does the same as a single review on the sample round shipped in
``datasets/samples/demo_round`` and publishes the alerts on the bus as a monitor would, so
``paigow alerts`` in another terminal sees them live. Both take ``--config FILE``
(:mod:`pipeline.settings`): the pipeline's settings, the review's and, for the demo, the bus
endpoints; an option given overrides the file.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.bus.endpoints import PUB_ENDPOINT, REPLAY_ENDPOINT
from pipeline.cli.common import (
    UsageError,
    add_settings_options,
    check_size,
    positive,
    settings_of,
)
from pipeline.cluster.runtime import AUTO
from pipeline.console.config import HTTP_DEFAULT

if TYPE_CHECKING:
    from pipeline.settings import Settings

DEMO_DIR = Path(__file__).resolve().parents[2] / "datasets" / "samples" / "demo_round"
DEMO_STRIDE = 2  # the demo reads every 2nd frame (12.5 fps, motion-gated detector): about a
# minute on 2 cores; 5 fps misses exposures and misreads faces (false alerts at stride 5)
DEFAULT_TABLE = "T1"
STILL_STRIDE = 8  # ReviewConfig.still_stride, repeated (and tested equal) so that building the
# parser imports no video stack
VIDEO_SUFFIXES = (".avi", ".m4v", ".mkv", ".mov", ".mp4", ".mpeg", ".mpg", ".ts", ".webm")
# pipeline.review.batch.VIDEO_SUFFIXES, repeated (and tested equal) for the same reason
EXIT_SOME_FAILED = 1  # a batch in which a recording could not be reviewed
OFF = "off"  # --ray off: a batch reviewed in this process
RUN_FLAGS = {"stride": "review.stride", "still_stride": "review.still_stride"}
REVIEW_FLAGS = {**RUN_FLAGS, "layout": "layout", "table": "table"}
DEMO_FLAGS = {**RUN_FLAGS, "pub": "bus.pub_endpoint", "replay": "bus.replay_endpoint"}
"""Each option -> the setting it overrides when given."""
DEMO_PRESET = {"review": {"stride": DEMO_STRIDE}}  # under --config: a file may change it


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "review",
        help="review recorded videos: events, alerts, snapshots, annotated video, report page",
        description="Run the pipeline on a recorded video and write what an investigator reads "
        "into DIR: events.jsonl, alerts.jsonl (+ journal.sqlite), snapshots/, annotated.mp4 and "
        "report.html. Unreadable stretches of a damaged file are reported, not fatal. Several "
        "recordings, or folders of them, are a batch: each into DIR/NAME/ as a Ray task "
        "(one by one in this process without Ray), DIR/index.html listing them all; a "
        "recording finished by an earlier run is skipped.",
    )
    p.add_argument(
        "recordings",
        type=Path,
        nargs="+",
        metavar="RECORDING",
        help="a recording (any format PyAV reads, or an image folder), or a folder of them: "
        f"its {' '.join(VIDEO_SUFFIXES)} files, sorted, else those of its sub-folders",
    )
    p.add_argument(
        "--out",
        type=Path,
        required=True,
        metavar="DIR",
        help="review folder (several recordings: one folder each in it, and index.html)",
    )
    p.add_argument(
        "--layout",
        type=Path,
        metavar="L",
        help="the camera's layout YAML; default: the layout of a scenario.json beside the "
        "recording (a rendered clip's folder), else the packaged default layout",
    )
    p.add_argument(
        "--table", metavar="T", help=f"table id for the alerts (default {DEFAULT_TABLE})"
    )
    p.add_argument(
        "--ray",
        default=AUTO,
        metavar="WHERE",
        help="several recordings: 'auto' (default) starts a local Ray instance sized to the "
        "machine, HOST:PORT or ray://HOST:PORT joins a cluster (whose workers can read the "
        "recordings and DIR), 'off' reviews them one by one in this process",
    )
    p.add_argument(
        "--workers",
        type=positive(int),
        metavar="N",
        help="several recordings: review at most N at once (default: one per core on a local "
        "instance, each with the detector threads its share of the cores allows)",
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
    d.add_argument(
        "--console",
        nargs="?",
        const=HTTP_DEFAULT,
        metavar="HOST:PORT",
        help="also serve the alert console for the demo round, on loopback without a login "
        f"(default {HTTP_DEFAULT}; port 0: any free one): open its address in a browser and "
        "watch the wall fill as the round plays; it stays up after the round until Ctrl-C",
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
        "--overwrite",
        action="store_true",
        help="replace the files of an earlier review in DIR (a batch: review again the "
        "recordings done earlier too)",
    )
    p.add_argument(
        "--quiet", action="store_true", help="no progress bar, no alert lines (a batch: no bar)"
    )


def _prepare_out(out: Path, overwrite: bool) -> None:
    """Refuse a file as DIR, and an earlier review in it unless ``overwrite`` (then remove
    only the review's own files)."""
    from pipeline.review.job import clear_review, review_files

    if out.exists() and not out.is_dir():
        raise UsageError(f"{out}: not a folder")
    if review_files(out) and not overwrite:
        raise UsageError(f"{out}: holds an earlier review; choose another folder or --overwrite")
    clear_review(out)


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
    from pipeline.review.job import layout_for

    info = probe_video(video)  # a missing file or a non-video fails before any work
    layout, source = layout_for(video, settings.layout)
    check_size(layout, info.size_wh)
    _prepare_out(out, args.overwrite)
    config = settings.review_config(layout.chung_box)
    print(f"layout: {source}", file=sys.stderr)
    if layout.tile_note:
        print(f"layout: {layout.tile_note}", file=sys.stderr)
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
    if len(args.recordings) > 1 or _holds_videos(args.recordings[0]):
        return _batch(args)
    (video,) = args.recordings
    result = _run(args, effective_settings(args, REVIEW_FLAGS), video, args.out, None)
    print("\n".join(summary_lines(result)))
    return 0


def _holds_videos(path: Path) -> bool:
    """A folder with recordings in it (a folder of pictures is one recording)."""
    return path.is_dir() and any(p.suffix.lower() in VIDEO_SUFFIXES for p in path.iterdir())


def _batch(args: argparse.Namespace) -> int:
    """Several recordings, each into its own folder of DIR, and DIR/index.html."""
    from pipeline.review.batch import BatchRun, plan_batch, recordings_of

    settings = effective_settings(args, REVIEW_FLAGS)
    recordings = recordings_of(args.recordings)
    if args.out.exists() and not args.out.is_dir():
        raise UsageError(f"{args.out}: not a folder")
    data = settings.model_dump(mode="json")
    if settings.layout is not None:  # as this folder sees it, for workers elsewhere
        data["layout"] = str(settings.layout.absolute())
    plan = plan_batch(recordings, args.out, data, args.overwrite)
    print(
        f"{len(recordings)} recordings into {args.out}: {len(plan.jobs)} to review, "
        f"{len(recordings) - len(plan.jobs)} done earlier (skipped)",
        file=sys.stderr,
    )
    with BatchRun(args.out, plan, progress=not args.quiet) as run:
        _run_jobs(args, plan.jobs, run)
    print(run.counts())
    return EXIT_SOME_FAILED if run.failures else 0


def _run_jobs(args: argparse.Namespace, jobs, run) -> None:
    """On Ray as ``--ray`` says; in this process with ``--ray off``, when ``--ray auto`` would
    review one recording at a time (one recording, ``--workers 1`` or one core: a local
    instance adds its start, seconds, and nothing else), or when it finds no Ray (said in one
    line)."""
    from pipeline.review.batch import run_here

    if args.ray.strip() == OFF:
        return run_here(jobs, run)
    from pipeline.cluster.batch import local_share, run_on_ray
    from pipeline.cluster.runtime import RayUnavailable, ray_address

    if ray_address(args.ray) is None and local_share(args.workers, len(jobs))[0] == 1:
        return run_here(jobs, run)

    try:
        run_on_ray(jobs, run, args.ray, args.workers)
    except RayUnavailable as exc:
        if ray_address(args.ray) is not None:
            raise  # the cluster asked for: bad input, one line
        run.say(f"paigow review: {exc}; reviewing the recordings one by one in this process")
        run_here(jobs, run)


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
    if args.console is not None and publish is None:
        raise UsageError("--console follows the demo's bus: drop --no-publish")
    stride = settings.review.stride
    with ExitStack() as stack:
        if args.console is not None:
            from pipeline.cli.console import demo_console

            console = stack.enter_context(demo_console(args.console, publish, out))
        print(f"demo: the sample round, 1 frame in {stride}, into {out}", file=sys.stderr)
        try:
            result = _run(args, settings, video, out, publish)
        except ValueError as exc:
            if str(exc).startswith("cannot bind"):
                raise UsageError(f"{exc} (is a monitor running? try --no-publish)") from None
            raise
        print("\n".join(summary_lines(result)))
        if args.console is not None:
            from pipeline.review.config import JOURNAL_FILE, ReviewConfig

            return console.wait(out / JOURNAL_FILE, settings.table or ReviewConfig.table)
    return 0
