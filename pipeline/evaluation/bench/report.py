"""The bench's printed table: every mode's medians over its repeats against the decode floor
and ultralytics, adaptive reviews against the plain review of their stride, and each compare's
stage times and agreements."""

from __future__ import annotations

import statistics

from pipeline.evaluation.bench.compare import CONFIDENT, MATCH_IOU, VISIBLE
from pipeline.evaluation.bench.events import (
    KEY_EVENTS,
    found_in,
    key_difference,
    key_events,
    key_sides,
)


def _median(runs: list[dict], *keys) -> float:
    values = []
    for r in runs:
        for k in keys:
            r = r[k]
        values.append(r)
    return statistics.median(values)


def report(results: dict[str, list[dict]], clip_fps: float, oracle: list[str] | None) -> None:
    floor = _median(results["decode"], "fps") if "decode" in results else None
    ultra = _median(results["ultralytics"], "fps") if "ultralytics" in results else None
    compares = [r for mode, runs in results.items() if mode.startswith("compare") for r in runs]
    reference = compares[0]["events"]["ungated"] if compares else None
    reference = reference or next(iter(results.get("ungated", [])), {}).get("events")
    print(
        f"{'mode':<24}{'frames':>7}{'fps':>7}{'x real':>7}{'/decode':>8}{'/ultra':>7}"
        f"{'ms med':>7}{'ms p90':>7}{'RSS MiB':>8}  key events differing; oracle's found"
    )
    for mode, runs in results.items():
        if mode.startswith("compare"):
            continue
        fps = _median(runs, "fps")
        same = "-"
        if reference is not None and "events" in runs[0]:
            same = str(max(key_difference(reference, r["events"]) for r in runs))
            if oracle is not None:
                found, total = found_in(runs[0]["events"], oracle)
                same += f"; {found}/{total}"
        print(
            f"{mode:<24}{runs[0]['frames']:>7}{fps:>7.1f}{fps / clip_fps:>7.2f}"
            f"{fps / floor if floor else float('nan'):>8.2f}"
            f"{fps / ultra if ultra else float('nan'):>7.2f}"
            f"{_median(runs, 'ms', 'median'):>7.1f}{_median(runs, 'ms', 'p90'):>7.1f}"
            f"{_median(runs, 'rss_mib'):>8.0f}  {same}"
        )
        if "gating" in runs[0]:
            skipped = runs[-1].get("still_skipped")
            still = f"  still frames skipped {skipped}" if skipped else ""
            print(f"{'':<24}gate {runs[-1]['gating']}  faces {runs[-1]['faces']}{still}")
    report_adaptive(results)
    for c in compares:
        report_compare(c)


def report_adaptive(results: dict[str, list[dict]]) -> None:
    """Each adaptive review (``+stillN``) against the plain review of its stride: speed and
    the key events only one of them found (first repeats)."""
    for mode, runs in results.items():
        opts = mode.split("+")
        plain = "+".join(o for o in opts if not o.startswith("still"))
        if plain == mode or plain not in results:
            continue
        base = results[plain]
        only_plain, only_still = key_sides(base[0]["events"], runs[0]["events"])
        speed = _median(runs, "fps") / _median(base, "fps")
        print(
            f"\n{mode} against {plain}: {speed:.2f}x the speed, processed "
            f"{runs[0]['processed']} frames instead of {base[0]['processed']}; "
            f"key events differing: {len(only_plain) + len(only_still)} "
            f"of {len(key_events(base[0]['events']))}"
        )
        for line in only_plain:
            print(f"    - {line}")
        for line in only_still:
            print(f"    + {line}")


def report_compare(c: dict) -> None:
    others = [n for n, v in c.items() if n != "ungated" and isinstance(v, dict) and "ms" in v]
    u = c["ungated"]
    print("\ncompare (same frames, interleaved), ms per frame, against the ungated pipeline:")
    for name in others:
        o = c[name]
        for stage in ("ms", "detector_ms", "reader_ms"):
            a, b = u[stage], o[stage]
            print(
                f"  {name:<15}{stage.removesuffix('_ms').replace('ms', 'pipeline'):<10} "
                f"median {a['median']:6.1f} -> {b['median']:6.1f}   mean {a['mean']:6.1f} -> "
                f"{b['mean']:6.1f}   ratio (mean) {a['mean'] / max(b['mean'], 1e-9):5.2f}x"
            )
    n_key = len(key_events(c["events"]["ungated"]))
    print(
        f"\n  {'':<15}{'boxes':>8}{'conf>=.5':>9}{'tracks':>8}{'faces':>8}{'recall':>8}"
        f"{'precis.':>8}{'key ev. differing':>19}{'oracle found':>14}"
    )
    for name in ["ungated", *others]:
        o = c[name]
        oracle = (
            "-" if o["oracle_found"] is None else f"{o['oracle_found']}/{c['oracle_key_events']}"
        )
        print(
            f"  {name:<15}{o['detection_agreement']:>8.4f}{o['confident_agreement']:>9.4f}"
            f"{o['track_agreement']:>8.4f}{o['shown_face_agreement']:>8.4f}"
            f"{o['truth_recall']:>8.4f}{o['truth_precision']:>8.4f}"
            f"{o['key_events_differing']:>13d} of {n_key:<3d}{oracle:>14}"
        )
    print(
        f"  (boxes: ungated boxes matched at IoU > {MATCH_IOU}, same class; conf>=.5: those at "
        f"confidence >= {CONFIDENT}; tracks: ungated tracks seen matched; faces: same face or die "
        f"value on matched face-up tracks; recall/precision: against the ground truth, objects "
        f"at least {VISIBLE} visible; key events: {', '.join(KEY_EVENTS)}, without track ids, "
        "as multisets)"
    )
    if "gated" in c:
        print(f"  gate {c['gated']['gating']}  faces {c['gated']['faces']}")
    for name in others:
        if c[name]["key_events_differing"]:
            print(f"  key events ungated -> {name}:")
            only_a, only_b = key_sides(c["events"]["ungated"], c["events"][name])
            print(
                "\n".join(
                    [f"    - {line}" for line in only_a] + [f"    + {line}" for line in only_b]
                )
            )
