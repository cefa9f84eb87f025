"""A small SVG line chart for benchmark curves, written by hand (no plotting dependency).

`line_chart(title, x_label, x_values, panels)` draws one panel per (label, series) pair side by
side; x values are spaced evenly (concurrency levels 1, 4, 16, 64 read like a log axis), each
panel's y axis starts at 0 and ends at a round number above its largest value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from xml.sax.saxutils import escape

COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd")
PANEL_W, PANEL_H = 380, 260
LEFT, RIGHT, TOP, BOTTOM = 60, 20, 50, 50


@dataclass(frozen=True)
class Series:
    name: str
    values: list[float]


def _nice_max(value: float) -> float:
    if value <= 0:
        return 1.0
    magnitude = 10 ** math.floor(math.log10(value))
    for step in (1, 2, 2.5, 5, 10):
        if value <= step * magnitude:
            return step * magnitude
    return 10 * magnitude


def _fmt(value: float) -> str:
    return f"{value:g}" if value < 10_000 else f"{value / 1000:g}k"


def _panel(x0: int, label: str, x_label: str, xs: list[int], series: list[Series]) -> list[str]:
    top = max((v for s in series for v in s.values), default=1.0)
    y_max = _nice_max(top)
    plot_w = PANEL_W - LEFT - RIGHT
    plot_h = PANEL_H - TOP - BOTTOM

    def px(i: int) -> float:
        return x0 + LEFT + (plot_w * i / max(1, len(xs) - 1))

    def py(v: float) -> float:
        return TOP + plot_h * (1 - v / y_max)

    out = [
        f'<text x="{x0 + LEFT + plot_w / 2}" y="{TOP - 12}" text-anchor="middle" '
        f'font-weight="bold">{escape(label)}</text>',
        f'<rect x="{x0 + LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="none" '
        'stroke="#999"/>',
    ]
    for k in range(5):
        v = y_max * k / 4
        out.append(
            f'<line x1="{x0 + LEFT}" x2="{x0 + LEFT + plot_w}" y1="{py(v):.1f}" y2="{py(v):.1f}" '
            'stroke="#eee"/>'
        )
        out.append(
            f'<text x="{x0 + LEFT - 6}" y="{py(v) + 4:.1f}" text-anchor="end">{_fmt(v)}</text>'
        )
    for i, x in enumerate(xs):
        out.append(f'<text x="{px(i):.1f}" y="{TOP + plot_h + 18}" text-anchor="middle">{x}</text>')
    out.append(
        f'<text x="{x0 + LEFT + plot_w / 2}" y="{TOP + plot_h + 38}" '
        f'text-anchor="middle">{escape(x_label)}</text>'
    )
    for n, s in enumerate(series):
        colour = COLOURS[n % len(COLOURS)]
        points = " ".join(f"{px(i):.1f},{py(v):.1f}" for i, v in enumerate(s.values))
        out.append(f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for i, v in enumerate(s.values):
            out.append(f'<circle cx="{px(i):.1f}" cy="{py(v):.1f}" r="3" fill="{colour}"/>')
        ly = TOP + 14 + 16 * n
        out.append(
            f'<line x1="{x0 + LEFT + 10}" x2="{x0 + LEFT + 30}" y1="{ly - 4}" y2="{ly - 4}" '
            f'stroke="{colour}" stroke-width="2"/>'
        )
        out.append(f'<text x="{x0 + LEFT + 36}" y="{ly}">{escape(s.name)}</text>')
    return out


def line_chart(
    title: str, x_label: str, x_values: list[int], panels: list[tuple[str, list[Series]]]
) -> str:
    """The whole SVG document as text."""
    width = PANEL_W * len(panels)
    height = PANEL_H + 30
    body = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{width / 2}" y="20" text-anchor="middle" font-size="14">{escape(title)}</text>',
    ]
    for n, (label, series) in enumerate(panels):
        body += ['<g transform="translate(0,20)">']
        body += _panel(PANEL_W * n, label, x_label, x_values, series)
        body += ["</g>"]
    body.append("</svg>")
    return "\n".join(body) + "\n"
