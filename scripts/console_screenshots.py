"""Screenshots of ``paigow console`` for the docs (docs/console-wall.png, console-detail.png).

A room of three tables behind a :class:`~pipeline.bus.RoomProxy`: T1 replays the alerts of a
review of the demo round (``--run DIR``, the output folder of ``paigow review`` or
``paigow demo``, whose snapshots the console is allowed to show), T2 a few irregularities
with its vision degraded, T3 a lost camera. The console is logged in as an operator, one
irregularity is acknowledged, and headless Chromium (Debian's) takes 1280x800 pictures.

    python scripts/console_screenshots.py --run /tmp/demo_run --out docs
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from playwright.sync_api import sync_playwright

from pipeline.alerts import AlertState, from_dict, make_alert, utc_now
from pipeline.bus import AlertPublisher, PublisherConfig, RoomProxy
from pipeline.console.auth import add_operator
from pipeline.console.config import ConsoleConfig
from pipeline.console.server import serve_in_thread
from pipeline.journal import Journal

ANY_PORT = "tcp://127.0.0.1:*"
VIEWPORT = {"width": 1280, "height": 800}
MESSAGES = {
    "hands_mixed": "the tiles of boxes 4 and 5 came together: which tile is whose is lost",
    "payout_error": "box 2 was paid 180, expected 190 (1:1 less 5%)",
    "wager_after_no_more_bets": "chips added to box 6 after no more bets",
    "camera_lost": "no usable frame for 5.0 s",
}


def demo_alerts(run: Path) -> list:
    """The run's alerts, as new ones (no number, wall time now) of table T1."""
    lines = (run / "alerts.jsonl").read_text().splitlines()
    alerts = [from_dict(json.loads(line)) for line in lines if line.strip()]
    return [replace(a, seq=None, journal=None, table="T1", wall_time=utc_now()) for a in alerts]


def other_alerts(table: str, kinds: list[tuple[str, int | None, AlertState]]) -> list:
    return [
        make_alert(kind, state=state, table=table, round=7, box=box, video_time_s=40.0 + i,
                   frame=1000 + 25 * i, message=MESSAGES[kind])
        for i, (kind, box, state) in enumerate(kinds)
    ]  # fmt: skip


def publishers(stack: contextlib.ExitStack, folder: Path) -> dict[str, AlertPublisher]:
    config = PublisherConfig(ANY_PORT, ANY_PORT, heartbeat_s=0.5)
    found = {}
    for table, status in (
        ("T1", {"fps": 24.8, "camera": "ok", "degraded": False, "phase": "settling"}),
        ("T2", {"fps": 23.9, "camera": "ok", "degraded": True, "phase": "setting"}),
        ("T3", {"fps": 0.0, "camera": "lost", "degraded": False, "phase": "-"}),
    ):
        journal = stack.enter_context(Journal(folder / f"{table}.db"))
        publisher = stack.enter_context(AlertPublisher(journal, table, config))
        publisher.status = lambda status=status: status
        found[table] = publisher
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", type=Path, required=True, help="a review's output folder")
    parser.add_argument("--out", type=Path, default=Path("docs"))
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="console-shots-"))
    try:
        with contextlib.ExitStack() as stack:
            shoot(stack, folder, args.run, args.out)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def shoot(stack: contextlib.ExitStack, folder: Path, run: Path, out: Path) -> None:
    tables = publishers(stack, folder)
    proxy = stack.enter_context(
        RoomProxy({t: (p.pub_endpoint, p.replay_endpoint) for t, p in tables.items()},
                  config_any_port())
    )  # fmt: skip
    operators = folder / "operators.yaml"
    add_operator(operators, "alice", "demo-password")
    config = ConsoleConfig(
        pub_endpoint=proxy.pub_endpoint, replay_endpoint=proxy.replay_endpoint, port=0,
        db_path=folder / "console.sqlite", operators_path=operators, evidence_dirs=(run,),
    )  # fmt: skip
    console = stack.enter_context(serve_in_thread(config))
    time.sleep(1.0)  # the console subscribed through the proxy
    tables["T2"].emit_all(other_alerts("T2", [
        ("hands_mixed", 4, AlertState.OPEN), ("payout_error", 2, AlertState.OPEN),
        ("wager_after_no_more_bets", 6, AlertState.OPEN),
    ]))  # fmt: skip
    tables["T3"].emit_all(other_alerts("T3", [("camera_lost", None, AlertState.OPEN)]))
    tables["T1"].emit_all(demo_alerts(run))
    time.sleep(1.5)
    browser = stack.enter_context(sync_playwright()).chromium.launch(
        executable_path=shutil.which("chromium"), args=["--no-sandbox", "--disable-gpu"]
    )
    page = browser.new_context(viewport=VIEWPORT).new_page()
    page.goto(console.url + "/")
    page.fill("input[name=operator]", "alice")
    page.fill("input[name=password]", "demo-password")
    page.click("button[type=submit]")
    page.wait_for_selector("#live:text('live')")
    page.locator(".row[data-kind='payout_error']").click()
    page.fill("#ack-note", "supervisor re-counted the payout, correct")
    page.click("#ack-button")
    page.locator(".row[data-kind='payout_error'][data-acks='1']").wait_for()
    page.click("#close-detail")
    time.sleep(1.5)  # a health update or two
    page.screenshot(path=str(out / "console-wall.png"))
    page.locator(".row[data-kind='single_tile_exposed']").first.click()
    page.locator("#d-snapshot img").wait_for()
    page.wait_for_function("() => document.querySelector('#d-snapshot img').complete")
    page.screenshot(path=str(out / "console-detail.png"))
    browser.close()


def config_any_port():
    from pipeline.bus import ProxyConfig

    return ProxyConfig(pub_endpoint=ANY_PORT, replay_endpoint=ANY_PORT)


if __name__ == "__main__":
    main()
