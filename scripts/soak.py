"""Soak the alert bus: the monitor on a looped clip, restarted and killed, with consoles and a
flooding peer, for a given time; then count what the consoles got against the journal.

    python scripts/soak.py --minutes 10
    python scripts/soak.py --minutes 2 --kill-every-s 20 --out /tmp/soak

What runs:
- ``paigow monitor`` on the demo clip (``--realtime``, like a camera), one journal throughout;
  when the clip ends it is started again; every ``--kill-every-s`` it is stopped, alternately
  with SIGKILL (a crash: what it left open is closed at the next start) and SIGTERM;
- a console (``paigow alerts --json``) from the start, and a late joiner from half time;
- a flooding peer: replay requests that are never read, and hostile ones (``from_seq`` past
  SQLite's range, 4,000 brackets), from two sockets, all along;
- with ``--disk-full`` (root, Linux): the journal on an 8 MiB tmpfs that another file fills for
  15 s in every 45 (the spill file on the other disk, ``--spill``).

At the end the monitor is stopped with SIGTERM, a bare publisher serves the journal on the same
endpoints until both consoles have caught up, and the script prints, per console, alerts
received, lost (journaled but never printed), duplicated and out of order, and the monitor's
memory (peak, and per run: the flood must not make it grow). Exit status 0 when nothing was
lost, duplicated or out of order.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "datasets" / "samples" / "demo_round"
TABLE = "SOAK"
CATCH_UP_S = 60.0  # longest wait, at the end, for the consoles to reach the journal's end


def free_endpoint() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"tcp://127.0.0.1:{s.getsockname()[1]}"


def rss_mib(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


class Console:
    """``paigow alerts --json`` in a subprocess; the sequence numbers it printed, in order."""

    def __init__(self, name: str, pub: str, replay: str, log: Path) -> None:
        self.name = name
        command = [sys.executable, "-m", "pipeline.cli", "alerts", "--connect", pub,
                   "--replay", replay, "--table", TABLE, "--json", "--silence-s", "10"]  # fmt: skip
        self._err = open(log, "w")  # noqa: SIM115 (closed in stop)
        self.proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=self._err,
                                     text=True)  # fmt: skip
        self.seqs: list[int] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.seqs.append(json.loads(line)["seq"])

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGINT)
        try:
            code = self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = -9
        self._reader.join(5)
        self._err.close()
        return code


@dataclass
class Run:
    """One monitor process: how it ended and its memory."""

    ended: str = "running"
    peak_mib: float = 0.0
    samples: list[float] = field(default_factory=list)


class Monitor:
    """``paigow monitor`` on the clip, started again whenever it ends."""

    def __init__(self, args: argparse.Namespace, layout: Path, pub: str, replay: str) -> None:
        self.command = [
            sys.executable, "-m", "pipeline.cli", "monitor", str(args.clip), "--layout",
            str(layout), "--table", TABLE, "--journal", str(args.journal),
            "--spill", str(args.out / "spill.jsonl"), "--realtime", "--publish", pub,
            "--replay", replay,
        ]  # fmt: skip
        self.log = open(args.out / "monitor.log", "a")  # noqa: SIM115 (closed in close)
        self.runs: list[Run] = []
        self.proc: subprocess.Popen | None = None

    def ensure_running(self) -> None:
        if self.proc is not None and self.proc.poll() is not None:
            self.runs[-1].ended = f"exit {self.proc.returncode}"
            self.proc = None
        if self.proc is None:
            self.proc = subprocess.Popen(self.command, cwd=ROOT, stdout=self.log, stderr=self.log)
            self.runs.append(Run())

    def sample(self) -> None:
        mib = rss_mib(self.proc.pid) if self.proc else None
        if mib is not None:
            run = self.runs[-1]
            run.samples.append(mib)
            run.peak_mib = max(run.peak_mib, mib)

    def stop(self, how: signal.Signals) -> None:
        if self.proc is None:
            return
        self.proc.send_signal(how)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.runs[-1].ended = how.name
        self.proc = None

    def close(self) -> None:
        self.log.close()


def flood(replay: str, stop: threading.Event, counts: dict[str, int]) -> None:
    """Two peers that ask and never read, plus hostile requests, about 100 a second."""
    from pipeline.bus.probe import flood_replay

    requests = [
        json.dumps({"table": TABLE, "from_seq": 1}).encode(),
        b'{"table": "SOAK", "from_seq": 9223372036854775808, "limit": 10}',
        b"[" * 4000,
    ]
    done = flood_replay(replay, requests, stop)
    counts["sent"], counts["refused"] = done.sent, done.refused


def progress(elapsed_s: float, minutes: float, runs: int, last: bool = False) -> None:
    """Refreshed in place on a terminal; a line every 30 s otherwise."""
    tty = sys.stderr.isatty()
    if not (tty or last or int(elapsed_s) // 30 > progress.shown):
        return
    progress.shown = int(elapsed_s) // 30
    line = f"soak: {int(elapsed_s) // 60}:{int(elapsed_s) % 60:02d} of {minutes:g} min, {runs} runs"
    print(("\r" if tty else "") + line, end="\n" if last or not tty else "", file=sys.stderr,
          flush=True)  # fmt: skip


progress.shown = -1


FULL_S, FREE_S = 15.0, 30.0  # the disk is full this long, then free this long, in turn


def fill_and_free(disk: Path, stop: threading.Event, counts: dict[str, int]) -> None:
    """Fill ``disk`` with another file for FULL_S, free it for FREE_S, until ``stop``."""
    filler = disk / "filler"
    while not stop.wait(FREE_S):
        try:
            with open(filler, "wb") as file:
                while True:
                    file.write(b"\0" * 65536)
                    file.flush()
        except OSError:  # full now (or full already: not even the filler could be made)
            counts["full"] += 1
        stop.wait(FULL_S)
        filler.unlink(missing_ok=True)


@contextlib.contextmanager
def small_disk(folder: Path, size_mib: int):
    """A tmpfs of ``size_mib`` mounted on ``folder`` (root, Linux); SystemExit otherwise."""
    folder.mkdir(exist_ok=True)
    command = ["mount", "-t", "tmpfs", "-o", f"size={size_mib}m", "tmpfs", str(folder)]
    if subprocess.run(command, capture_output=True).returncode != 0:
        raise SystemExit("soak: --disk-full needs to mount a tmpfs (root, Linux)")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)


def soak(args: argparse.Namespace, layout: Path) -> tuple[Monitor, list[Console], dict]:
    pub, replay = free_endpoint(), free_endpoint()
    monitor = Monitor(args, layout, pub, replay)
    consoles = [Console("console", pub, replay, args.out / "console.log")]
    stop, counts = threading.Event(), {"sent": 0, "refused": 0, "full": 0}
    flooder = threading.Thread(target=flood, args=(replay, stop, counts), daemon=True)
    flooder.start()
    filler = threading.Thread(target=fill_and_free, args=(args.journal.parent, stop, counts))
    if args.disk_full:
        filler.start()
    rng = random.Random(args.seed)  # kills at random points of a run: some with alerts open
    start = time.monotonic()
    end, next_kill, kills = start + args.minutes * 60, start + args.kill_every_s, 0
    while (now := time.monotonic()) < end:
        monitor.ensure_running()
        monitor.sample()
        if now >= next_kill:
            monitor.stop(signal.SIGKILL if kills % 2 == 0 else signal.SIGTERM)
            kills, next_kill = kills + 1, now + rng.uniform(0.25, 1.0) * args.kill_every_s
        if len(consoles) == 1 and now >= start + args.minutes * 30:
            consoles.append(Console("late joiner", pub, replay, args.out / "late.log"))
        progress(now - start, args.minutes, len(monitor.runs))
        time.sleep(1.0)
    progress(time.monotonic() - start, args.minutes, len(monitor.runs), last=True)
    monitor.stop(signal.SIGTERM)
    stop.set()
    flooder.join(5)
    if filler.is_alive():
        filler.join()  # the disk is free again
    return monitor, consoles, {"pub": pub, "replay": replay, **counts}


def finish(args: argparse.Namespace, consoles: list[Console], endpoints: dict) -> list:
    """Serve the journal until the consoles caught up; stop them; the journaled alerts."""
    from pipeline.bus import AlertPublisher, AlertStore, PublisherConfig
    from pipeline.journal import Journal

    with Journal(args.journal) as journal:
        config = PublisherConfig(endpoints["pub"], endpoints["replay"])
        store = AlertStore(journal, args.out / "spill.jsonl")  # what waits there is folded in
        with AlertPublisher(store, TABLE, config):
            last = journal.last_seq(TABLE)
            deadline = time.monotonic() + CATCH_UP_S
            while time.monotonic() < deadline and any(
                (c.seqs[-1] if c.seqs else 0) < last for c in consoles
            ):
                time.sleep(0.2)
            for console in consoles:
                console.stop()
        return journal.read(TABLE, 1, 10**9)


def report(alerts: list, monitor: Monitor, consoles: list[Console], counts: dict) -> int:
    journaled = [a.seq for a in alerts]
    bad = 0
    ends = {}
    for run in monitor.runs:
        ends[run.ended] = ends.get(run.ended, 0) + 1
    print(f"monitor runs: {len(monitor.runs)} ({', '.join(f'{n} {k}' for k, n in ends.items())})")
    print(f"flooding peer: {counts['sent']} requests sent, {counts['refused']} refused by its "
          "own full queue")  # fmt: skip
    if counts["full"]:
        print(f"disk full: {counts['full']} times, {FULL_S:g} s each")
    restarts = sum(1 for a in alerts if a.evidence.get("reason") == "restart")
    print(f"alerts journaled (sent): {len(journaled)}, {restarts} of them closing at a restart "
          "what a kill left open")  # fmt: skip
    for console in consoles:
        got = console.seqs
        lost = len(set(journaled) - set(got))
        duplicated = len(got) - len(set(got))
        disorder = sum(1 for a, b in itertools.pairwise(got) if b <= a)
        bad += lost + duplicated + disorder
        print(f"{console.name}: received {len(got)}, lost {lost}, duplicated {duplicated}, "
              f"out of order {disorder}")  # fmt: skip
    peaks = [run.peak_mib for run in monitor.runs if run.samples]
    if peaks:
        print(f"monitor memory: peak {max(peaks):.0f} MiB; peak per run, first to last: "
              + " ".join(f"{p:.0f}" for p in peaks))  # fmt: skip
    return 0 if bad == 0 else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--kill-every-s", type=float, default=45.0)
    parser.add_argument("--clip", type=Path, default=DEMO / "clip.mp4")
    parser.add_argument("--out", type=Path, help="journal and logs (default: a temporary folder)")
    parser.add_argument("--disk-full", action="store_true", help="fill the journal's disk in turns")
    parser.add_argument("--seed", type=int, default=0, help="of the kill times")
    args = parser.parse_args(argv)
    if args.minutes <= 0 or args.kill_every_s <= 0 or not args.clip.is_file():
        print("soak: --minutes and --kill-every-s must be > 0 and --clip a file", file=sys.stderr)
        return 2
    args.out = args.out or Path(tempfile.mkdtemp(prefix="soak-"))
    args.out.mkdir(parents=True, exist_ok=True)
    layout = args.out / "layout.yaml"
    subprocess.run([sys.executable, str(ROOT / "scripts" / "make_layout.py"), "--scenario",
                    str(args.clip.parent / "scenario.json"), "--out", str(layout)],
                   check=True)  # fmt: skip
    with contextlib.ExitStack() as stack:
        disk = stack.enter_context(small_disk(args.out / "disk", 8)) if args.disk_full else args.out
        args.journal = disk / "alerts.db"
        monitor, consoles, endpoints = soak(args, layout)
        monitor.close()
        alerts = finish(args, consoles, endpoints)
    print(f"soak: {args.minutes:g} min; logs in {args.out}")
    return report(alerts, monitor, consoles, endpoints)


if __name__ == "__main__":
    sys.exit(main())
