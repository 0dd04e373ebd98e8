#!/usr/bin/env python3
"""Draws how each route's cost grows, from bench/scale.sh's JSON results, as
one SVG (standard library only). Top row, the reads: throughput and p99 as
ratios to the axum -> tonic -> JSON floor of the same run, against catalog
size (at 64 connections) and against connections (at the size measured at
the most). Bottom row, the customer routes of that run, one panel per store
(memory, Redis, Redis Cluster): throughput against connections, as ratios
to the hop floor, or for checkout to the checkout driver's own floor (the
`driver floor` row before it), as the tables give them.

    python3 bench/chart.py bench/results/scale-*.json > bench/results/scale.svg
"""

import json
import math
import sys

FLOOR = "floor: axum -> tonic -> JSON"
DRIVER_FLOOR = "driver floor: axum -> tonic"
STORES = ["memory", "redis", "redis cluster"]
COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
          "#7f7f7f", "#bcbd22", "#17becf", "#393b79", "#637939", "#8c6d31", "#843c39",
          "#000000", "#5254a3"]
W, H, PAD, ROW = 300, 220, 46, 300


def ratios(run):
    """(route, connections) -> (throughput ratio, p99 ratio) for one run;
    checkout rows against the driver floor measured just before them."""
    hop, driver, out = {}, {}, {}
    for r in run["routes"]:
        c = r["connections"]
        if r["route"] == FLOOR:
            hop[c] = r
        elif r["route"] == DRIVER_FLOOR:
            driver[c] = r
        if r["route"].startswith(("floor", "driver floor")):
            continue
        base = (driver if r["route"].startswith("checkout") else hop).get(c)
        if base and base["rps"] and base["p99_us"]:
            out[(r["route"], c)] = (r["rps"] / base["rps"], r["p99_us"] / base["p99_us"])
    return out


def top_of(series, metric, cap):
    """The axis' top: the largest value rounded up, at most `cap` (values
    above are drawn at the top, their tooltips exact)."""
    values = [v[metric] for vs in series.values() for v in vs if v is not None]
    return min(max(2, math.ceil(max(values, default=1))), cap)


def panel(x0, y0, title, labels, series, metric, top):
    """One line chart: `series` is route -> list of values (None: missing)."""
    parts = [f'<g transform="translate({x0},{y0})">',
             f'<text x="{W / 2}" y="-10" text-anchor="middle" font-weight="bold">{title}</text>',
             f'<rect x="{PAD}" y="0" width="{W - PAD}" height="{H}" fill="none" stroke="#999"/>']
    every = 1 if top <= 12 else 2
    for tick in range(0, int(top) + 1, every):
        y = H - H * tick / top
        parts.append(f'<line x1="{PAD}" x2="{W}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eee"/>')
        parts.append(f'<text x="{PAD - 4}" y="{y + 4:.1f}" text-anchor="end">{tick}x</text>')
    y1 = H - H / top
    parts.append(f'<line x1="{PAD}" x2="{W}" y1="{y1:.1f}" y2="{y1:.1f}" stroke="#000" stroke-dasharray="4 3"/>')
    step = (W - PAD) / max(len(labels) - 1, 1)
    for i, label in enumerate(labels):
        parts.append(f'<text x="{PAD + i * step:.1f}" y="{H + 16}" text-anchor="middle">{label}</text>')
    for color, (route, values) in zip(COLORS, series.items()):
        points = [(PAD + i * step, H - H * min(v[metric], top) / top, v[metric])
                  for i, v in enumerate(values) if v is not None]
        if len(points) > 1:
            path = " ".join(f"{x:.1f},{y:.1f}" for x, y, _ in points)
            parts.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2"/>')
        for x, y, v in points:
            parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{color}">'
                         f'<title>{route}: {v:.2f}x</title></circle>')
    parts.append("</g>")
    return parts


def legend(x, y0, names):
    parts = []
    for i, (color, name) in enumerate(zip(COLORS, names)):
        y = y0 + i * 16
        parts.append(f'<rect x="{x}" y="{y - 9}" width="10" height="10" fill="{color}"/>')
        parts.append(f'<text x="{x + 14}" y="{y}">{name}</text>')
    return parts


def main(paths):
    runs = sorted((json.load(open(p)) for p in paths), key=lambda r: r["size"])
    by_size = {run["size"]: ratios(run) for run in runs}
    sizes = sorted(by_size)
    many = max(runs, key=lambda r: len({x["connections"] for x in r["routes"]}))
    conns = sorted({r["connections"] for r in many["routes"]})
    names = list(dict.fromkeys(r["route"] for r in many["routes"]
                               if not r["route"].startswith(("floor", "driver floor"))))
    stored = tuple(f" ({store})" for store in STORES)
    reads = [n for n in names if not n.endswith(stored)]
    writes = list(dict.fromkeys(n.rsplit(" (", 1)[0] for n in names if n.endswith(stored)))
    over_size = {rt: [by_size[s].get((rt, 64)) for s in sizes] for rt in reads}
    over_conns = {rt: [by_size[many["size"]].get((rt, c)) for c in conns] for rt in reads}
    size_labels = [f"{s:,}" for s in sizes]
    conn_labels = [str(c) for c in conns]
    at = f"{many['size']:,}"
    width = 4 * (W + 30) + 260
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{2 * ROW + 20}" '
           'font-family="sans-serif" font-size="11">',
           '<rect width="100%" height="100%" fill="#fff"/>']
    panels = [("req/s vs floor, by catalog size (64 conns)", size_labels, over_size, 0, 8),
              ("p99 vs floor, by catalog size (64 conns)", size_labels, over_size, 1, 16),
              (f"req/s vs floor, by connections ({at})", conn_labels, over_conns, 0, 8),
              (f"p99 vs floor, by connections ({at})", conn_labels, over_conns, 1, 16)]
    for i, (title, labels, series, metric, cap) in enumerate(panels):
        svg += panel(i * (W + 30) + 10, 30, title, labels, series, metric, top_of(series, metric, cap))
    for i, store in enumerate(STORES):
        series = {w: [by_size[many["size"]].get((f"{w} ({store})", c)) for c in conns] for w in writes}
        if all(v is None for vs in series.values() for v in vs):
            continue
        svg += panel(i * (W + 30) + 10, ROW + 30, f"req/s vs floor, {store} ({at}), by connections",
                     conn_labels, series, 0, top_of(series, 0, 8))
    x = 4 * (W + 30) + 10
    svg += legend(x, 40, reads)
    svg += legend(3 * (W + 30) + 10, ROW + 40, writes)
    svg.append(f'<text x="{x}" y="{H + 60}">dashed: the floor (1x)</text>')
    svg.append(f'<text x="{3 * (W + 30) + 10}" y="{ROW + H + 10}">checkout: against the driver floor</text>')
    svg.append("</svg>")
    print("\n".join(svg))


if __name__ == "__main__":
    main(sys.argv[1:])
