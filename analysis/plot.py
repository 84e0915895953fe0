#!/usr/bin/python3
"""Draws one commsgd-report figure with matplotlib.

`commsgd-report plot KIND ... -o FILE` runs this script with the figure's data, a JSON document,
on stdin (see analysis/report/plot_data.hpp): {"kind": ..., "series": [{"label": ...,
"points": n, ...}], ...}. The report tool does the SQL; this script only draws. The format
(PNG, SVG, PDF) follows the output file's suffix.

What was drawn is printed as text, so that it can be checked without looking at pixels:
    series<TAB>label<TAB>points    one line per legend entry
    figure<TAB>width<TAB>height    the figure's size in pixels (at the DPI of a PNG)
Errors are one line on stderr and exit status 1, never a traceback.
"""

import argparse
import json
import math
import sys

try:
    import matplotlib
    import matplotlib.ticker
    matplotlib.use("Agg")  # no display on cluster nodes
    import matplotlib.pyplot as plt
except ImportError:
    raise SystemExit("plot.py: error: matplotlib is missing "
                     "(Debian: apt-get install python3-matplotlib)")

DPI = 100
PHASE_COLORS = {
    "data": "#8c8c8c",
    "forward_backward": "#4c72b0",
    "select": "#dd8452",
    "communicate": "#c44e52",
    "wait": "#937860",
    "update": "#55a868",
    "other": "#cccccc",
}
METRIC_NAMES = {
    "val_top1": "validation top-1",
    "val_top5": "validation top-5",
    "val_loss": "validation loss",
    "val_perplexity": "validation perplexity",
    "train_loss": "training loss",
    "train_acc": "training accuracy",
}


def convergence(data):
    fig, (by_epoch, by_time) = plt.subplots(1, 2, figsize=(12, 4.5), sharey=True)
    for s in data["series"]:
        if s["points"] == 0:
            continue
        (line,) = by_epoch.plot(s["epoch"], s["value"], marker="o", markersize=3, label=s["label"])
        by_time.plot(s["wall_seconds"], s["value"], marker="o", markersize=3,
                     color=line.get_color())
    by_epoch.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    by_epoch.set_xlabel("epoch")
    by_time.set_xlabel("wall time (s)")
    by_epoch.set_ylabel(METRIC_NAMES.get(data["metric"], data["metric"]))
    for ax in (by_epoch, by_time):
        ax.grid(alpha=0.3)
    by_epoch.legend(fontsize="small")
    return fig, [s for s in data["series"] if s["points"] > 0]


def scaling(data):
    workers = data["workers"]
    series = [s for s in data["series"] if s["points"] > 0]
    fig, ax = plt.subplots(figsize=(8, 4.5))
    width = 0.8 / len(series)
    for i, s in enumerate(series):
        x = [p + (i - (len(series) - 1) / 2) * width for p in range(len(workers))]
        heights = [100 * v if v is not None else 0 for v in s["values"]]
        ax.bar(x, heights, width, label=s["label"])
    ax.set_xticks(range(len(workers)), [f"P={p}" for p in workers])
    ax.set_xlabel("workers")
    ax.set_ylabel("scaling efficiency (%)")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize="small")
    return fig, series


def breakdown(data):
    bars = data["bars"]
    fig, ax = plt.subplots(figsize=(9, 1.5 + 0.5 * len(bars)))
    # The stack is the training thread's critical path: its length is the step.
    left = [0.0] * len(bars)
    for s in data["series"]:
        ms = [1e3 * (v or 0.0) for v in s["values"]]
        ax.barh(range(len(bars)), ms, height=0.6, left=left, label=s["label"],
                color=PHASE_COLORS.get(s["label"]))
        left = [a + b for a, b in zip(left, ms)]
    # Communication a thread of its own ran meanwhile is no part of the step: a thin bar under
    # the run's, never stacked.
    drawn = list(data["series"])
    overlapped = [1e3 * (v or 0.0) for v in data.get("overlapped", [])]
    if any(overlapped):
        label = "overlapped communication (not in the step)"
        ax.barh([i + 0.38 for i in range(len(bars))], overlapped, height=0.14, label=label,
                color="none", edgecolor=PHASE_COLORS["communicate"], hatch="////",
                linewidth=0.8)
        drawn.append({"label": label, "points": sum(1 for v in overlapped if v > 0)})
    ax.set_yticks(range(len(bars)), bars)
    ax.invert_yaxis()  # first run on top, as in the report's table
    ax.set_xlabel("milliseconds per iteration (mean over ranks, steady state)")
    # Above the bars, never over them.
    ax.legend(fontsize="small", ncol=4, loc="lower center",
              bbox_to_anchor=(0.5, 1.0), frameon=False)
    return fig, drawn


def selection(data):
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for s in data["series"]:
        ax.loglog(s["d"], s["seconds"], marker="o", label=s["label"])
    ax.set_xlabel("d (entries)")
    ax.set_ylabel("selection time (s)")
    ax.grid(which="both", alpha=0.3)
    ax.legend(fontsize="small")
    return fig, data["series"]


def grad_stats(data):
    """Left: contraction of the selection against the bounds over training ("Understanding Top-k",
    Fig. 2). Right: the accumulated gradient's histogram with the normal density of its mean and
    standard deviation, the bell shape that makes Top-k beat 1 - k/d."""
    fig, (over_steps, shape) = plt.subplots(1, 2, figsize=(12, 4.5))
    drawn = []
    for s in data["series"]:
        (line,) = over_steps.plot(s["step"], s["contraction"], label=f"{s['label']}: measured")
        over_steps.plot(s["step"], s["bound_linear"], linestyle="--", color=line.get_color(),
                        label=f"{s['label']}: 1 - k/d")
        over_steps.plot(s["step"], s["bound_squared"], linestyle=":", color=line.get_color(),
                        label=f"{s['label']}: (1 - k/d)^2")
        drawn.append(s)
    over_steps.set_xlabel("iteration")
    over_steps.set_ylabel("||acc - S(acc)||^2 / ||acc||^2")
    over_steps.grid(alpha=0.3)
    over_steps.legend(fontsize="small")
    h = data.get("histogram")
    if h:
        bins = len(h["counts"])
        width = (h["high"] - h["low"]) / bins
        centers = [h["low"] + (i + 0.5) * width for i in range(bins)]
        total = sum(h["counts"]) + h["below"] + h["above"]
        density = [c / (total * width) for c in h["counts"]]
        shape.bar(centers, density, width=width, alpha=0.6, label=h["label"])
        if h["stddev"] > 0:
            mu, sigma = h["mean"], h["stddev"]
            normal = [math.exp(-0.5 * ((x - mu) / sigma) ** 2) / (sigma * math.sqrt(2 * math.pi))
                      for x in centers]
            shape.plot(centers, normal, color="black", label="normal, same mean and std")
        shape.set_yscale("log")
        shape.set_xlabel("value of the accumulated gradient")
        shape.set_ylabel("density")
        shape.legend(fontsize="small")
        drawn.append({"label": f"histogram {h['label']}", "points": bins})
    return fig, drawn


def norm_study(data):
    """The gTop-k paper's norm study: how far the applied update u lands from the dense
    aggregate x of the same step, against keeping k random entries of x and the bound (1-k/d)||x||
    that its code draws (no square root). Left: the distances; right: each divided by ||x||, where
    they differ by a few percent at most when k is a small share of d."""
    fig, (absolute, relative) = plt.subplots(1, 2, figsize=(12, 4.5))
    styles = [("selected_distance", "-", "||x - u||"), ("randk_distance", "--", "||x - randk(x)||"),
              ("bound", ":", "(1 - k/d)||x||")]
    for s in data["series"]:
        color = None
        for key, style, name in styles:
            (line,) = absolute.plot(s["step"], s[key], linestyle=style, color=color,
                                    label=f"{s['label']}: {name}")
            color = line.get_color()
            share = [v / n if n > 0 else 0 for v, n in zip(s[key], s["dense_norm"])]
            relative.plot(s["step"], share, linestyle=style, color=color)
    absolute.set_ylabel("L2 distance to the dense aggregate x")
    relative.set_ylabel("the same, divided by ||x||")
    for ax in (absolute, relative):
        ax.set_xlabel("iteration")
        ax.grid(alpha=0.3)
    absolute.legend(fontsize="small")
    return fig, data["series"]


KINDS = {"convergence": convergence, "scaling": scaling, "breakdown": breakdown,
         "selection": selection, "grad_stats": grad_stats, "norm_study": norm_study}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", required=True, help="figure file: .png, .svg or .pdf")
    args = parser.parse_args()
    try:
        data = json.load(sys.stdin)
        fig, drawn = KINDS[data["kind"]](data)
        fig.tight_layout()
        fig.savefig(args.output, dpi=DPI)
    except Exception as e:  # one line, not a traceback
        raise SystemExit(f"plot.py: error: {args.output}: {type(e).__name__}: {e}")
    for s in drawn:
        print(f"series\t{s['label']}\t{s['points']}")
    width, height = fig.get_size_inches() * DPI
    print(f"figure\t{round(width)}\t{round(height)}")


if __name__ == "__main__":
    main()
