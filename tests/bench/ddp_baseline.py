#!/usr/bin/python3
"""The baseline a PyTorch user would otherwise run: DistributedDataParallel (gloo, CPU) training
the same VGG-16 (CIFAR variant, batch norm) on the same synthetic 3x32x32 batches as
`commsgd-bench dense-overlap`, one thread per rank. Records the slowest rank's seconds per timed
iteration, the median over --repeats, as the bench row ('ddp', 'ddp_iteration') of --db, a
database commsgd-bench has created (results/performance/run.sh runs the two alternated).

  /usr/bin/python3 tests/bench/ddp_baseline.py --db results/performance/bench.sqlite
"""
import argparse
import datetime
import json
import os
import socket
import sqlite3
import statistics
import subprocess
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn

# VGG-16's configuration: output channels of each 3x3 convolution, "M" a 2x2 max-pool.
VGG16 = [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"]


def vgg16(classes=10):
    layers, channels = [], 3
    for v in VGG16:
        if v == "M":
            layers.append(nn.MaxPool2d(2))
        else:
            layers += [nn.Conv2d(channels, v, 3, padding=1), nn.BatchNorm2d(v), nn.ReLU(inplace=True)]
            channels = v
    return nn.Sequential(*layers, nn.Flatten(), nn.Linear(512, classes))


def seconds_per_iteration(rank, args, queue):
    torch.set_num_threads(args.threads)
    dist.init_process_group("gloo", rank=rank, world_size=args.workers)
    torch.manual_seed(1)
    model = nn.parallel.DistributedDataParallel(vgg16(), bucket_cap_mb=args.bucket_mb)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)
    loss_of = nn.CrossEntropyLoss()
    x = torch.randn(args.batch_size, 3, 32, 32)
    y = torch.randint(0, 10, (args.batch_size,))
    per_repeat = []
    for _ in range(args.repeats):
        for i in range(args.warmup + args.iterations):
            if i == args.warmup:
                dist.barrier()
                start = time.perf_counter()
            optimizer.zero_grad()
            loss_of(model(x), y).backward()
            optimizer.step()
        elapsed = torch.tensor([(time.perf_counter() - start) / args.iterations])
        dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)  # the slowest rank's
        per_repeat.append(elapsed.item())
    if rank == 0:
        queue.put(statistics.median(per_repeat))
    dist.destroy_process_group()


def first_value(path, key, separator):
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(key):
                    return line.split(separator, 1)[1].strip().strip('"')
    except OSError:
        pass
    return ""


def git_revision():
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        return subprocess.run(["git", "-C", here, "describe", "--always", "--dirty", "--abbrev=12"],
                              capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def record(db, suite, name, params, value, unit, **versions):
    """One row of the bench table, as commsgd-bench writes them: the machine (CPU, cores, OS and
    the given library versions, LibTorch's at least) and this checkout's revision with it."""
    machine = {"cpu": first_value("/proc/cpuinfo", "model name", ":"), "cores": os.cpu_count(),
               "os": first_value("/etc/os-release", "PRETTY_NAME", "="),
               "libtorch": torch.__version__, **versions}
    with sqlite3.connect(db) as con:
        con.execute(
            "INSERT INTO bench (created_at, suite, name, params, value, unit, host, machine,"
            " git_revision) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds")
             .replace("+00:00", "Z"), suite, name, json.dumps(params, sort_keys=True), value, unit,
             socket.gethostname(), json.dumps(machine), git_revision()))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--db", required=True, help="a bench database commsgd-bench has created")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--iterations", type=int, default=5)
    p.add_argument("--repeats", type=int, default=1)
    p.add_argument("--bucket-mb", type=float, default=25)
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args()
    if not os.path.isfile(args.db):
        p.error(f"{args.db}: no such database (run a commsgd-bench benchmark into it first)")

    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29517")
    queue = mp.get_context("spawn").SimpleQueue()
    mp.spawn(seconds_per_iteration, args=(args, queue), nprocs=args.workers)
    seconds = queue.get()

    params = {"model": "vgg16", "shape": [3, 32, 32], "batch_size": args.batch_size,
              "workers": args.workers, "iterations": args.iterations, "warmup": args.warmup,
              "repeats": args.repeats, "bucket_mb": args.bucket_mb, "threads": args.threads,
              "backend": "gloo"}
    record(args.db, "ddp", "ddp_iteration", params, seconds, "s")
    print(f"DDP (gloo), {args.workers} ranks, vgg16 batch {args.batch_size}: "
          f"{1e3 * seconds:.1f} ms an iteration; recorded in {args.db} (bench table)")


if __name__ == "__main__":
    main()
