#!/usr/bin/python3
"""How commsgd-report's time grows with the run database, as a lab's database grows.

Builds databases of N runs with about M logged steps each, on H hosts, from real runs: copies of
the runs of the given databases (their epochs, steps and ranks), each copy an hour after the one
before on its host so that no two overlap, its steps repeated until it has M. The copies are
written as a schema version 3 file, as a build from before run_figures wrote them; `commsgd-report
merge` turns that into a current file, as a user would (its time is the "merge" column). Then
each report subcommand is timed on the current file, as a whole process, the median of
--repeat runs, and from the smallest N to the largest its growth is given as a power of N.

  report_scale.py --report BUILD/analysis/report/commsgd-report --source results/*/runs.sqlite \\
                  [--runs 2500,10000] [--hosts 1,64] [--steps 100] [--repeat 3] [--markdown]

Needs only Python's sqlite3 module and the commsgd-report given.
"""

import argparse
import math
import os
import platform
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCHEMA_STEPS = ["schema.sql", "schema_v2.sql", "schema_v3.sql"]  # a version 3 file

COMMANDS = [
    ("runs", ["runs"]),
    ("compare", ["compare"]),
    ("scaling", ["scaling"]),
    ("breakdown", ["breakdown"]),
    ("convergence", ["convergence"]),
    ("simulate check", ["simulate", "check"]),
    ("export run_summary", ["export", "run_summary"]),
]


def columns(db, table):
    return [row[1] for row in db.execute(f"PRAGMA table_info({table})")]


def load_templates(report, sources, workdir):
    """The source databases merged into one current file: its runs, children and bench rows."""
    merged = os.path.join(workdir, "templates.sqlite")
    subprocess.run([report, "merge", "-o", merged, *sources], check=True,
                   stdout=subprocess.DEVNULL)
    db = sqlite3.connect(merged)
    db.row_factory = sqlite3.Row
    runs = [dict(r) for r in db.execute("SELECT * FROM runs ORDER BY created_at, id")]
    children = {}
    for table in ("epochs", "steps"):
        for row in db.execute(f"SELECT * FROM {table} ORDER BY run_id, 2"):
            children.setdefault((table, row["run_id"]), []).append(dict(row))
    bench = [dict(r) for r in db.execute("SELECT * FROM bench")]
    db.close()
    return runs, children, bench


def iso(seconds):
    """Seconds since 2020-01-01 as the run database's UTC text."""
    t = time.gmtime(1577836800 + seconds)
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", t)


def build(path, templates, n_runs, hosts, steps_per_run):
    """A version 3 file of n_runs copies of the template runs; returns its count of steps."""
    runs, children, bench = templates
    db = sqlite3.connect(path)
    for step in SCHEMA_STEPS:
        with open(os.path.join(ROOT, "analysis", step)) as f:
            db.executescript(f.read())
    db.execute("PRAGMA user_version = 3")
    run_cols = columns(db, "runs")
    epoch_cols = columns(db, "epochs")
    step_cols = columns(db, "steps")
    bench_cols = [c for c in columns(db, "bench") if c != "id"]

    def insert(table, cols, rows):
        db.executemany(
            f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
            ([row[c] for c in cols] for row in rows))

    insert("bench", bench_cols, bench)
    total_steps = 0
    slot = [0] * hosts  # the next free hour of each host
    for i in range(n_runs):
        template = runs[i % len(runs)]
        run_id = f"{i:08x}-0000-4000-8000-{i:012x}"
        workers = max(1, int(template["workers"]))
        first_host = i % hosts
        start_hour = max(slot[(first_host + r) % hosts] for r in range(workers))
        for r in range(workers):
            slot[(first_host + r) % hosts] = start_hour + 1
        start = start_hour * 3600
        run = dict(template, id=run_id, created_at=iso(start), finished_at=iso(start + 1800),
                   host=f"node{first_host:03d}")
        insert("runs", run_cols, [run])
        insert("epochs", epoch_cols,
               [dict(e, run_id=run_id) for e in children.get(("epochs", template["id"]), [])])
        template_steps = children.get(("steps", template["id"]), [])
        copied = []
        if template_steps:
            stride = template_steps[-1]["step"] + 1
            repeat = 0
            while len(copied) < steps_per_run:
                for s in template_steps:
                    if len(copied) == steps_per_run:
                        break
                    copied.append(dict(s, run_id=run_id, step=s["step"] + repeat * stride))
                repeat += 1
        insert("steps", step_cols, copied)
        total_steps += len(copied)
        db.executemany(
            "INSERT INTO ranks (run_id, rank, started_at, host, finished_at, peak_rss_bytes) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            [(run_id, r, iso(start), f"node{(first_host + r) % hosts:03d}", iso(start + 1800),
              200_000_000 + r) for r in range(workers)])
    db.commit()
    db.close()
    return total_steps


def timed(argv, repeat):
    """Median wall seconds of `repeat` runs of argv; fails on a non-zero exit."""
    seconds = []
    for _ in range(repeat):
        began = time.perf_counter()
        done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        seconds.append(time.perf_counter() - began)
        if done.returncode != 0:
            sys.exit(f"report_scale: {' '.join(argv)}: exit {done.returncode}: {done.stderr}")
    return statistics.median(seconds)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--report", required=True, help="the commsgd-report to time")
    parser.add_argument("--source", nargs="+", required=True, help="databases of real runs")
    parser.add_argument("--runs", default="2500,10000", help="database sizes, in runs")
    parser.add_argument("--hosts", default="1,64", help="host counts")
    parser.add_argument("--steps", type=int, default=100, help="logged steps per run")
    parser.add_argument("--repeat", type=int, default=3, help="timings per figure (median)")
    parser.add_argument("--markdown", action="store_true", help="a markdown table")
    args = parser.parse_args()
    sizes = [int(n) for n in args.runs.split(",")]
    host_counts = [int(h) for h in args.hosts.split(",")]

    with tempfile.TemporaryDirectory(prefix="commsgd-report-scale-") as workdir:
        templates = load_templates(args.report, args.source, workdir)
        header = ["runs_in_db", "steps_in_db", "hosts", "merge"] + [name for name, _ in COMMANDS]
        rows, times = [], {}
        for hosts in host_counts:
            for n in sizes:
                old = os.path.join(workdir, f"v3-{n}-{hosts}.sqlite")
                current = os.path.join(workdir, f"v4-{n}-{hosts}.sqlite")
                steps = build(old, templates, n, hosts, args.steps)
                merge = timed([args.report, "merge", "-o", current, old], 1)
                figures = [timed([args.report, *argv, current], args.repeat)
                           for _, argv in COMMANDS]
                times[(hosts, n)] = figures
                rows.append([n, steps, hosts, merge] + figures)
                os.remove(old)
                os.remove(current)
                print(f"report_scale: {n} runs on {hosts} hosts done", file=sys.stderr)
        growth = []
        for hosts in host_counts:
            small, large = times[(hosts, sizes[0])], times[(hosts, sizes[-1])]
            ratio = sizes[-1] / sizes[0]
            growth.append([f"growth {sizes[0]} to {sizes[-1]}", "", hosts, ""] +
                          [math.log(max(b, 1e-9) / max(a, 1e-9)) / math.log(ratio)
                           for a, b in zip(small, large)])

    def cell(v):
        return f"{v:.3f}" if isinstance(v, float) else str(v)

    print(f"# {platform.node()}, {os.cpu_count()} cores; seconds per command (median of "
          f"{args.repeat}); growth as a power of the number of runs")
    if args.markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * 3 + "---:|" * (len(header) - 3))
        for row in rows + growth:
            print("| " + " | ".join(cell(v) for v in row) + " |")
    else:
        print(",".join(header))
        for row in rows + growth:
            print(",".join(cell(v) for v in row))


if __name__ == "__main__":
    main()
