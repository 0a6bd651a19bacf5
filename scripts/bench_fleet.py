"""A fleet of 1, 2 and 4 tables on this machine, fed by files paced at real time, side by side.

    python scripts/bench_fleet.py                              # the demo clip, 1 2 4 tables
    python scripts/bench_fleet.py VIDEO --layout L --tables 1 2 --seconds 120
    python scripts/bench_fleet.py --config half.yaml   # e.g. source: {keep_every: 2}

For each table count, ``paigow fleet`` runs that many monitors (one Ray actor each, on a local
instance sized to the machine) from the same recording, looped and paced at its frame rate as a
camera would give it, each with its metrics endpoint. Once every table answers ``/readyz`` and
``--warmup-s`` has passed, the tables' ``/metrics`` are read, and again ``--seconds`` later; the
figures are over that window:

- processed: the share of the frames read from the source that went through the pipeline (the
  rest were dropped by the bounded queue: the monitor was behind);
- fps: frames processed per second, per table;
- alert latency: mean and worst-bucket seconds from the arrival of the frame that raised an
  alert to its publication (``paigow_alert_latency_seconds``);
- CPU: each monitor process's CPU seconds per wall second (1.0 = one core), per table and
  summed, and the whole machine's busy share over the window (Ray's own processes included);
- memory: each monitor process's resident memory.

Needs Ray (``pip install -e '.[cluster]'``). Free loopback ports from ``--base-port`` on.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

ROOT = Path(__file__).resolve().parents[1]
DEMO_CLIP = ROOT / "datasets" / "samples" / "demo_round" / "clip.mp4"
DEFAULT_LAYOUT = ROOT / "pipeline" / "data" / "default_layout.yaml"


def fleet_yaml(
    video: Path, layout: Path, count: int, folder: Path, base_port: int, config: Path | None
) -> Path:
    """A fleet file of ``count`` tables on ``video``, looped and paced (each with the settings
    file ``config``, if given); its path."""
    lines = ["ray: auto", "tables:"]
    for i in range(count):
        port = base_port + 10 * i
        lines += [
            f"  - table: B{i + 1}",
            f"    source: {video}",
            f"    layout: {layout}",
            f"    journal: {folder / f'B{i + 1}.db'}",
            f"    publish: tcp://127.0.0.1:{port}",
            f"    replay: tcp://127.0.0.1:{port + 1}",
            f"    metrics: 127.0.0.1:{port + 2}",
            "    loop: true",
            "    realtime: true",
        ]
        if config is not None:
            lines.append(f"    config: {config}")
    path = folder / "fleet.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, ""
    except OSError:
        return 0, ""


def scrape(url: str) -> dict[str, float]:
    """The samples of one monitor's /metrics: name (with ``le`` for buckets) -> value."""
    status, text = get(f"{url}/metrics")
    if status != 200:
        raise RuntimeError(f"{url}/metrics answered {status}")
    samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            bound = sample.labels.get("le")
            key = sample.name if bound is None else f"{sample.name}:{bound}"
            samples[key] = sample.value
    return samples


def machine_busy() -> tuple[float, float]:
    """(busy, total) jiffies of the whole machine, from /proc/stat."""
    with open("/proc/stat", encoding="ascii") as stat:
        fields = [float(x) for x in stat.readline().split()[1:]]
    idle = fields[3] + fields[4]  # idle and iowait
    return sum(fields) - idle, sum(fields)


def wait_ready(urls: list[str], fleet: subprocess.Popen, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if fleet.poll() is not None:
            raise RuntimeError(f"paigow fleet exited with status {fleet.returncode}")
        if all(get(f"{url}/readyz")[0] == 200 for url in urls):
            return
        time.sleep(0.5)
    raise RuntimeError(f"the tables were not ready within {timeout_s:.0f} s")


def worst_bucket(before: dict, after: dict, name: str) -> float | None:
    """The smallest histogram bound holding every observation of the window."""
    total = after.get(f"{name}_count", 0) - before.get(f"{name}_count", 0)
    if total <= 0:
        return None
    bounds = sorted(
        (float(key.split(":", 1)[1]), after[key] - before.get(key, 0))
        for key in after
        if key.startswith(f"{name}_bucket:")
    )
    return next((bound for bound, count in bounds if count >= total), float("inf"))


def bench(count: int, args: argparse.Namespace) -> dict:
    with tempfile.TemporaryDirectory(prefix="bench-fleet-") as tmp:
        folder = Path(tmp)
        path = fleet_yaml(args.video, args.layout, count, folder, args.base_port, args.config)
        urls = [f"http://127.0.0.1:{args.base_port + 10 * i + 2}" for i in range(count)]
        log = open(folder / "fleet.log", "w", encoding="utf-8")  # noqa: SIM115
        command = [sys.executable, "-m", "pipeline.cli", "fleet", str(path), "--status-s", "3600"]
        fleet = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
        try:
            wait_ready(urls, fleet, args.start_timeout_s)
            time.sleep(args.warmup_s)
            before, busy0, t0 = [scrape(u) for u in urls], machine_busy(), time.monotonic()
            time.sleep(args.seconds)
            after, busy1, t1 = [scrape(u) for u in urls], machine_busy(), time.monotonic()
        finally:
            fleet.send_signal(signal.SIGTERM)
            try:
                fleet.wait(60)
            except subprocess.TimeoutExpired:
                fleet.kill()
            log.close()
        return figures(count, before, after, t1 - t0, busy0, busy1)


def figures(count, before, after, wall_s, busy0, busy1) -> dict:
    def delta(i: int, name: str) -> float:
        return after[i].get(name, 0.0) - before[i].get(name, 0.0)

    tables = range(count)
    read = [delta(i, "paigow_frames_read_total") for i in tables]
    done = [delta(i, "paigow_frames_processed_total") for i in tables]
    cpu = [delta(i, "process_cpu_seconds_total") / wall_s for i in tables]
    alerts = sum(delta(i, "paigow_alert_latency_seconds_count") for i in tables)
    latency_sum = sum(delta(i, "paigow_alert_latency_seconds_sum") for i in tables)
    worst = [worst_bucket(before[i], after[i], "paigow_alert_latency_seconds") for i in tables]
    worst = [w for w in worst if w is not None]
    busy = (busy1[0] - busy0[0]) / max(busy1[1] - busy0[1], 1.0)
    return {
        "tables": count,
        "processed": min(d / r for d, r in zip(done, read, strict=True)) if all(read) else 0.0,
        "fps": sum(done) / wall_s / count,
        "alerts": int(alerts),
        "latency_s": latency_sum / alerts if alerts else None,
        "worst_s": max(worst) if worst else None,
        "cpu_table": sum(cpu) / count,
        "cpu_all": sum(cpu),
        "machine": busy,
        "rss_mb": max(after[i].get("process_resident_memory_bytes", 0) for i in tables) / 2**20,
    }


def show(rows: list[dict], args: argparse.Namespace) -> None:
    print(
        f"{args.video.name}, paced at its frame rate and looped; {args.seconds:.0f} s measured "
        f"after {args.warmup_s:.0f} s of warm-up; {os.cpu_count()} cores; settings: "
        f"{args.config or 'defaults'}"
    )
    print(
        "tables  processed  fps/table  alerts  latency s  worst <= s  CPU/table  CPU all  "
        "machine busy  RSS MB/table"
    )
    for r in rows:
        latency = "-" if r["latency_s"] is None else f"{r['latency_s']:.2f}"
        worst = "-" if r["worst_s"] is None else f"{r['worst_s']:g}"
        print(
            f"{r['tables']:6d}  {r['processed']:9.2f}  {r['fps']:9.1f}  {r['alerts']:6d}  "
            f"{latency:>9}  {worst:>10}  {r['cpu_table']:9.2f}  {r['cpu_all']:7.2f}  "
            f"{r['machine']:12.0%}  {r['rss_mb']:12.0f}"
        )


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("video", type=Path, nargs="?", default=DEMO_CLIP)
    p.add_argument("--layout", type=Path, default=DEFAULT_LAYOUT)
    p.add_argument("--config", type=Path, help="a settings file for every table")
    p.add_argument("--tables", type=int, nargs="+", default=[1, 2, 4], metavar="N")
    p.add_argument("--seconds", type=float, default=60.0, help="measured window")
    p.add_argument("--warmup-s", type=float, default=10.0)
    p.add_argument("--start-timeout-s", type=float, default=180.0)
    p.add_argument("--base-port", type=int, default=17100)
    args = p.parse_args()
    for path in (args.video, args.layout, args.config):
        if path is not None and not path.is_file():
            print(f"bench_fleet: {path}: no such file", file=sys.stderr)
            return 2
    args.video, args.layout = args.video.resolve(), args.layout.resolve()
    args.config = args.config.resolve() if args.config else None
    rows = []
    for count in args.tables:
        print(f"{count} table(s) ...", file=sys.stderr, flush=True)
        try:
            rows.append(bench(count, args))
        except RuntimeError as exc:
            print(f"bench_fleet: {count} table(s): {exc}", file=sys.stderr)
            return 1
    show(rows, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
