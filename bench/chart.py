#!/usr/bin/env python3
"""Draws how each route's cost grows, from bench/scale.sh's JSON results, as
one SVG (standard library only): throughput and p99 as ratios to the
axum -> tonic -> JSON floor of the same run, against catalog size (at 64
connections) and against connections (at 100,000 products, or the largest
size measured at several).

    python3 bench/chart.py bench/results/scale-*.json > bench/results/scale.svg
"""

import json
import sys

FLOOR = "floor: axum -> tonic -> JSON"
COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
          "#7f7f7f", "#bcbd22", "#17becf", "#393b79", "#637939", "#8c6d31", "#843c39",
          "#000000", "#5254a3"]
W, H, PAD = 300, 220, 46


def ratios(run):
    """(route, connections) -> (throughput ratio, p99 ratio) for one run."""
    floor = {r["connections"]: r for r in run["routes"] if r["route"] == FLOOR}
    out = {}
    for r in run["routes"]:
        base = floor.get(r["connections"])
        if r["route"].startswith("floor") or not base or not base["rps"]:
            continue
        out[(r["route"], r["connections"])] = (r["rps"] / base["rps"], r["p99_us"] / base["p99_us"])
    return out


def panel(x0, title, labels, series, metric, top):
    """One line chart: `series` is route -> list of values (None: missing)."""
    parts = [f'<g transform="translate({x0},30)">',
             f'<text x="{W / 2}" y="-10" text-anchor="middle" font-weight="bold">{title}</text>',
             f'<rect x="{PAD}" y="0" width="{W - PAD}" height="{H}" fill="none" stroke="#999"/>']
    for tick in range(0, int(top) + 1):
        y = H - H * tick / top
        parts.append(f'<line x1="{PAD}" x2="{W}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eee"/>')
        parts.append(f'<text x="{PAD - 4}" y="{y + 4:.1f}" text-anchor="end">{tick}x</text>')
    y1 = H - H / top
    parts.append(f'<line x1="{PAD}" x2="{W}" y1="{y1:.1f}" y2="{y1:.1f}" stroke="#000" stroke-dasharray="4 3"/>')
    step = (W - PAD) / max(len(labels) - 1, 1)
    for i, label in enumerate(labels):
        parts.append(f'<text x="{PAD + i * step:.1f}" y="{H + 16}" text-anchor="middle">{label}</text>')
    for color, (route, values) in zip(COLORS, series.items()):
        points = [(PAD + i * step, H - H * min(v[metric], top) / top)
                  for i, v in enumerate(values) if v is not None]
        if len(points) > 1:
            path = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
            parts.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2"/>')
        for x, y in points:
            parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{color}"><title>{route}</title></circle>')
    parts.append("</g>")
    return parts


def main(paths):
    runs = sorted((json.load(open(p)) for p in paths), key=lambda r: r["size"])
    by_size = {run["size"]: ratios(run) for run in runs}
    sizes = sorted(by_size)
    many = max(runs, key=lambda r: len({x["connections"] for x in r["routes"]}))
    conns = sorted({r["connections"] for r in many["routes"]})
    routes = [r["route"] for r in many["routes"] if not r["route"].startswith("floor")]
    routes = list(dict.fromkeys(routes))
    over_size = {rt: [by_size[s].get((rt, 64)) for s in sizes] for rt in routes}
    over_conns = {rt: [by_size[many["size"]].get((rt, c)) for c in conns] for rt in routes}
    size_labels = [f"{s:,}" for s in sizes]
    conn_labels = [str(c) for c in conns]
    width = 4 * (W + 30) + 260
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{H + 80}" '
           'font-family="sans-serif" font-size="11">',
           '<rect width="100%" height="100%" fill="#fff"/>']
    svg += panel(10, "req/s vs floor, by catalog size (64 conns)", size_labels, over_size, 0, 3)
    svg += panel(W + 40, "p99 vs floor, by catalog size (64 conns)", size_labels, over_size, 1, 12)
    svg += panel(2 * (W + 30) + 10, f"req/s vs floor, by connections ({many['size']:,})",
                 conn_labels, over_conns, 0, 3)
    svg += panel(3 * (W + 30) + 10, f"p99 vs floor, by connections ({many['size']:,})",
                 conn_labels, over_conns, 1, 12)
    x = 4 * (W + 30) + 10
    for i, (color, route) in enumerate(zip(COLORS, routes)):
        y = 40 + i * 16
        svg.append(f'<rect x="{x}" y="{y - 9}" width="10" height="10" fill="{color}"/>')
        svg.append(f'<text x="{x + 14}" y="{y}">{route}</text>')
    svg.append(f'<text x="{x}" y="{H + 60}">dashed: the floor (1x)</text>')
    svg.append("</svg>")
    print("\n".join(svg))


if __name__ == "__main__":
    main(sys.argv[1:])
