"""Plots as inline SVG text: no plotting library, no fonts or files to embed, no network.

Two chart shapes cover the report: grouped bars (linear, or logarithmic around a reference line
such as 1× speedup, where bars grow up for faster and down for slower) and a dot plot of values
in [0, 100]. The report's figures (:func:`report_figures`) are built from its tables, so a plot
never shows a number the tables do not.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape

from .model import Report
from .outcomes import PLACEHOLDER

PALETTE = {"guided": "#2f6fb3", "unguided": "#e08a2c"}
EXTRA = ("#4d9a5a", "#a04ea0", "#7a7a7a", "#c44e52")
W, H = 920, 380
LEFT, RIGHT, TOP, BOTTOM = 64, 24, 48, 110


@dataclass(frozen=True)
class Series:
    name: str
    values: list[float | None]  # one per category; None: no bar (the label says why)
    color: str


@dataclass(frozen=True)
class Figure:
    id: str
    title: str
    caption: str
    svg: str


def run_colors(report: Report) -> dict[str, str]:
    """Guided runs blue, unguided orange; a second run of the same condition gets another colour."""
    used: set[str] = set()
    extra = iter(EXTRA * 4)
    out = {}
    for r in report.runs:
        c = PALETTE.get(r.condition, "")
        if not c or c in used:
            c = next(extra)
        used.add(c)
        out[r.name] = c
    return out


def _text(x: float, y: float, s: str, size: int = 11, anchor: str = "middle", rotate: float | None = None,
          weight: str = "normal", fill: str = "#222") -> str:
    tr = f' transform="rotate({rotate} {x:.1f} {y:.1f})"' if rotate is not None else ""
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" font-weight="{weight}" fill="{fill}"'
            f' font-family="system-ui, sans-serif"{tr}>{escape(s)}</text>')


def _legend(series: list[Series], extra: list[tuple[str, str]] = ()) -> list[str]:
    parts, x = [], LEFT
    for s in series:
        parts += [f'<rect x="{x}" y="24" width="12" height="12" fill="{s.color}"/>', _text(x + 16, 34, s.name, anchor="start")]
        x += 28 + 7 * len(s.name)
    for symbol, label in extra:
        parts += [_text(x + 6, 35, symbol, 13), _text(x + 16, 34, label, anchor="start")]
        x += 28 + 7 * len(label)
    return parts


def nice_step(top: float, most: int = 6) -> float:
    """A tick step of 1, 2 or 5 x 10^k giving at most ``most`` intervals up to ``top``."""
    base = 10 ** math.floor(math.log10(top / most)) if top > 0 else 1.0
    return next(m * base for m in (1, 2, 5, 10) if top / (m * base) <= most)


def bar_chart(fig_id: str, title: str, categories: list[str], series: list[Series], *, log: bool = False,
              ref: float = 0.0, y_label: str = "", y_max: float | None = None, markers: list[float | None] | None = None,
              marker_label: str = "", fmt: str = "{:.2f}") -> str:
    """Grouped bars, one group per category. With ``log``, bars start at ``ref`` (e.g. 1×) on a
    log axis; otherwise at 0. ``markers`` draw a diamond per category (e.g. the expert's speedup)."""
    vals = [v for s in series for v in s.values if v is not None and (v > 0 or not log)] + [v for v in (markers or []) if v]
    plot_w, plot_h = W - LEFT - RIGHT, H - TOP - BOTTOM
    if log:
        lo = 10 ** math.floor(math.log10(min(vals + [ref]))) if vals else ref / 10
        hi = 10 ** math.ceil(math.log10(max(vals + [ref]))) if vals else ref * 10
        hi = hi * 10 if hi == lo else hi
        f = lambda v: TOP + plot_h * (1 - (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo)))  # noqa: E731
        ticks = [10 ** e for e in range(int(round(math.log10(lo))), int(round(math.log10(hi))) + 1)]
        tick_fmt = lambda t: f"{t:g}×"  # noqa: E731
    else:
        step = nice_step(y_max if y_max is not None else max(vals + [1.0]))
        lo, hi = 0.0, y_max if y_max is not None else step * math.ceil(max(vals + [1.0]) * 1.05 / step)
        f = lambda v: TOP + plot_h * (1 - (v - lo) / (hi - lo))  # noqa: E731
        ticks = [k * step for k in range(int(round(hi / step)) + 1)]
        tick_fmt = lambda t: f"{t:g}"  # noqa: E731
    base = f(ref) if log else f(0.0)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" id="{fig_id}" role="img" viewBox="0 0 {W} {H}" width="{W}" height="{H}">',
             f"<title>{escape(title)}</title>", '<rect width="100%" height="100%" fill="white"/>', _text(W / 2, 16, title, 13, weight="600")]
    parts += _legend(series, [("◆", marker_label)] if markers and marker_label else [])
    for t in ticks:
        y = f(t)
        parts += [f'<line x1="{LEFT}" x2="{W - RIGHT}" y1="{y:.1f}" y2="{y:.1f}" stroke="#e3e3e3"/>', _text(LEFT - 6, y + 4, tick_fmt(t), anchor="end")]
    parts.append(f'<line x1="{LEFT}" x2="{W - RIGHT}" y1="{base:.1f}" y2="{base:.1f}" stroke="#444"/>')
    if y_label:
        parts.append(_text(16, TOP + plot_h / 2, y_label, rotate=-90))
    group_w = plot_w / max(1, len(categories))
    bar_w = min(36.0, group_w * 0.8 / max(1, len(series)))
    for ci, cat in enumerate(categories):
        x0 = LEFT + ci * group_w + (group_w - bar_w * len(series)) / 2
        for si, s in enumerate(series):
            v, x = s.values[ci], x0 + si * bar_w
            if v is None or (log and v <= 0):
                parts.append(_text(x + bar_w / 2, base - 4, "–", 10))
                continue
            y = f(v)
            top, height = min(y, base), max(abs(base - y), 1.0)
            parts.append(f'<rect x="{x:.1f}" y="{top:.1f}" width="{bar_w - 2:.1f}" height="{height:.1f}" fill="{s.color}">'
                         f"<title>{escape(s.name)} · {escape(cat)}: {escape(fmt.format(v))}</title></rect>")
            parts.append(_text(x + bar_w / 2 - 1, (y - 3) if y <= base else (y + 11), fmt.format(v), 9))
        if markers and markers[ci]:
            cx = LEFT + ci * group_w + group_w / 2
            parts.append(_text(cx, f(markers[ci]) + 5, "◆", 14, fill="#111"))
        parts.append(_text(LEFT + ci * group_w + group_w / 2, H - BOTTOM + 14, cat, 11, anchor="end", rotate=-30))
    parts.append("</svg>")
    return "\n".join(parts)


def dot_plot(fig_id: str, title: str, groups: list[Series], x_max: float = 100.0, x_label: str = "") -> str:
    """One row of dots per group (e.g. the per-task implementation scores of a run), with its mean."""
    row_h = 34
    height = TOP + row_h * max(1, len(groups)) + 40
    left = 170
    plot_w = W - left - RIGHT
    f = lambda v: left + plot_w * v / x_max  # noqa: E731
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" id="{fig_id}" role="img" viewBox="0 0 {W} {height}" width="{W}" height="{height}">',
             f"<title>{escape(title)}</title>", '<rect width="100%" height="100%" fill="white"/>', _text(W / 2, 16, title, 13, weight="600")]
    for k in range(5):
        t = x_max * k / 4
        parts += [f'<line x1="{f(t):.1f}" x2="{f(t):.1f}" y1="{TOP - 10}" y2="{height - 36}" stroke="#e3e3e3"/>', _text(f(t), height - 22, f"{t:g}")]
    if x_label:
        parts.append(_text(left + plot_w / 2, height - 6, x_label))
    for gi, g in enumerate(groups):
        y = TOP + gi * row_h + row_h / 2
        vals = [v for v in g.values if v is not None]
        parts.append(_text(left - 8, y + 4, g.name, anchor="end"))
        for v in vals:
            parts.append(f'<circle cx="{f(v):.1f}" cy="{y:.1f}" r="6" fill="{g.color}" fill-opacity="0.65"><title>{v:.1f}</title></circle>')
        if vals:
            m = sum(vals) / len(vals)
            parts.append(f'<line x1="{f(m):.1f}" x2="{f(m):.1f}" y1="{y - 11:.1f}" y2="{y + 11:.1f}" stroke="#111" stroke-width="2"><title>mean {m:.1f}</title></line>')
        else:
            parts.append(_text(left + 6, y + 4, "no analysed task", anchor="start"))
    parts.append("</svg>")
    return "\n".join(parts)


# --- the report's figures ------------------------------------------------------------------------


def _shown_tasks(report: Report, names: list[str]) -> list[int]:
    return [i for i, t in enumerate(report.universe)
            if not t.startswith(PLACEHOLDER) and any(report.slots[n][i].submitted for n in names)]


def speedup_figures(report: Report, colors: dict[str, str]) -> list[Figure]:
    """Per pair (or, with no pair, all runs together): speedup per task, paired bars on a log axis."""
    groups = [[p.guided, p.unguided] for p in report.pairs] or [[r.name for r in report.runs]]
    figs = []
    for k, names in enumerate(groups):
        idx = _shown_tasks(report, names)
        cats = [report.universe[i] for i in idx]
        series = [Series(f"{n} ({report.run(n).condition})", [report.slots[n][i].speedup for i in idx], colors[n]) for n in names]
        experts = [next((report.slots[n][i].expert_speedup for n in names if report.slots[n][i].expert_speedup), None) for i in idx]
        label = " vs ".join(names)
        svg = bar_chart(f"plot-speedup-{k}", f"Speedup over the reference per task: {label}", cats, series, log=True, ref=1.0,
                        y_label="speedup (log scale)", markers=experts, marker_label="expert", fmt="{:.3g}×")
        figs.append(Figure(f"plot-speedup-{k}", f"Speedup per task ({label})",
                           "Geomean speedup over the workloads, bars from 1× (up: faster than the reference); "
                           "– : not correct or not profiled; ◆ the expert's speedup.", svg))
    return figs


def score_figures(report: Report, colors: dict[str, str]) -> list[Figure]:
    """Distributions: Performance Score counts over the suite, implementation scores per task."""
    cats = ["0 (missing)", "0 (submitted)", "1", "2", "3"]
    series = []
    for r in report.runs:
        slots = report.slots[r.name]
        counts = [sum(not s.submitted for s in slots), sum(s.submitted and s.performance_score == 0 for s in slots)]
        counts += [sum(s.submitted and s.performance_score == v for s in slots) for v in (1, 2, 3)]
        series.append(Series(f"{r.name} ({r.condition})", [float(c) for c in counts], colors[r.name]))
    ps = bar_chart("plot-ps-distribution", "Performance Score distribution (tasks of the suite)", cats, series,
                   y_label="tasks", fmt="{:.0f}")
    dots = dot_plot("plot-impl-distribution", "Implementation score per analysed task (bar: mean)",
                    [Series(f"{r.name} ({r.condition})", [s.impl_score for s in report.slots[r.name]], colors[r.name]) for r in report.runs],
                    x_label="implementation score (0-100)")
    return [
        Figure("plot-ps-distribution", "Performance Score distribution",
               "Number of suite tasks at each Performance Score; missing tasks count 0.", ps),
        Figure("plot-impl-distribution", "Implementation score distribution", "One dot per analysed task.", dots),
    ]


def property_figure(report: Report, colors: dict[str, str]) -> Figure:
    table = report.table("properties")
    cats = [r["property"] for r in table.rows]
    series = [Series(f"{r.name} ({r.condition})",
                     [v if isinstance(v := row[f"rate:{r.name}"], (int, float)) else None for row in table.rows], colors[r.name])
              for r in report.runs]
    svg = bar_chart("plot-property-rates", "Implementation rate per catalogue property", cats, series, y_max=1.0,
                    y_label="share of tasks asking for it", fmt="{:.2f}")
    return Figure("plot-property-rates", "Property implementation rates",
                  "Order as in the properties table: what guidance did not fix comes first.", svg)


def report_figures(report: Report) -> list[Figure]:
    colors = run_colors(report)
    return [*speedup_figures(report, colors), *score_figures(report, colors), property_figure(report, colors)]
