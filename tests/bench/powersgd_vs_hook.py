#!/usr/bin/python3
"""commsgd's powersgd against PyTorch DDP (gloo) with its own PowerSGD hook, side by side.

Both train the same CIFAR ResNet-20 (He et al.'s option A shortcuts, commsgd's --model resnet20)
on synthetic 3x32x32 batches of --batch-size, --workers ranks of one thread each, with the same
rank and start iteration (--rank, --start-iter), SGD with momentum 0.9; the two alternated
--repeats times. For each: the seconds a step takes once compression has started (the mean over
the timed steps, of the slowest rank in DDP's case, of the ranks' mean in commsgd's record), and
the gradient entries a rank sends a compressed step (the hook's own count, its
total_numel_after_compression; commsgd's record, density x parameters). Records them as bench
rows of --db (suite 'powersgd'), a database commsgd-bench has created, and prints the ratio.

  /usr/bin/python3 tests/bench/powersgd_vs_hook.py --db results/performance/bench.sqlite \\
      --train build/release/trainer/commsgd-train
"""
import argparse
import os
import socket
import sqlite3
import statistics
import subprocess
import tempfile
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.algorithms.ddp_comm_hooks import powerSGD_hook as powersgd

from ddp_baseline import record as record_bench  # this directory's


FIRST_BUCKET_BYTES = 25 << 20


class BasicBlock(nn.Module):
    """He et al.'s CIFAR block, the shortcut subsampled and zero-padded (option A)."""

    def __init__(self, inputs, outputs, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(inputs, outputs, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(outputs)
        self.conv2 = nn.Conv2d(outputs, outputs, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(outputs)
        self.stride, self.pad = stride, outputs - inputs

    def forward(self, x):
        out = self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x)))))
        shortcut = x
        if self.stride != 1 or self.pad != 0:
            shortcut = x[:, :, ::self.stride, ::self.stride]
            shortcut = F.pad(shortcut, (0, 0, 0, 0, self.pad // 2, self.pad - self.pad // 2))
        return F.relu(out + shortcut)


def resnet20(classes=10):
    blocks, inputs = [], 16
    for outputs in (16, 32, 64):
        for b in range(3):
            blocks.append(BasicBlock(inputs, outputs, 2 if b == 0 and outputs != 16 else 1))
            inputs = outputs
    return nn.Sequential(nn.Conv2d(3, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU(),
                         *blocks, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, classes))


def ddp_with_hook(rank, args, queue):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=args.workers)
    torch.manual_seed(1)
    dist._DEFAULT_FIRST_BUCKET_BYTES = FIRST_BUCKET_BYTES
    model = nn.parallel.DistributedDataParallel(resnet20())
    state = powersgd.PowerSGDState(process_group=None, matrix_approximation_rank=args.rank,
                                   start_powerSGD_iter=args.start_iter)
    model.register_comm_hook(state, powersgd.powerSGD_hook)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_of = nn.CrossEntropyLoss()
    generator = torch.Generator().manual_seed(rank)
    warmup = args.start_iter + args.warmup
    for i in range(warmup + args.steps):
        if i == warmup:
            dist.barrier()
            start, entries_before = time.perf_counter(), state.total_numel_after_compression
        x = torch.randn(args.batch_size, 3, 32, 32, generator=generator)
        y = torch.randint(0, 10, (args.batch_size,), generator=generator)
        optimizer.zero_grad()
        loss_of(model(x), y).backward()
        optimizer.step()
    elapsed = torch.tensor([(time.perf_counter() - start) / args.steps])
    dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)  # the slowest rank's
    if rank == 0:
        entries = (state.total_numel_after_compression - entries_before) / args.steps
        queue.put((elapsed.item(), entries))
    dist.destroy_process_group()


def commsgd_powersgd(args):
    """commsgd-train's run, as a user launches it; its figures from the record."""
    with tempfile.TemporaryDirectory() as scratch:
        db = os.path.join(scratch, "runs.sqlite")
        mpirun = ["mpirun", "-np", str(args.workers), "--oversubscribe", "--bind-to", "none",
                  "-x", "OMP_NUM_THREADS=1"]
        if os.getuid() == 0:
            mpirun.append("--allow-run-as-root")
        steps = args.start_iter + args.warmup + args.steps
        subprocess.run(mpirun + [
            args.train, "--algo", "powersgd", "--powersgd-rank", str(args.rank),
            "--powersgd-start-iter", str(args.start_iter), "--model", "resnet20",
            "--dataset", "synthetic", "--synthetic-shape", "3,32,32",
            "--synthetic-train", str(args.workers * args.batch_size * steps),
            "--synthetic-val", str(args.batch_size), "--batch-size", str(args.batch_size),
            "--epochs", "1", "--lr", "0.01", "--momentum", "0.9", "--threads", "1",
            "--log-every", str(args.warmup), "--db", db, "--quiet"], check=True)
        with sqlite3.connect(db) as con:
            # The windows after the start iteration and the first window of compression.
            seconds, density, parameters = con.execute(
                "SELECT avg(s.total_s_mean), avg(s.density_mean),"
                " json_extract(r.config, '$.parameters')"
                " FROM steps s JOIN runs r ON r.id = s.run_id WHERE s.step > ?",
                (args.start_iter + args.warmup,)).fetchone()
    return seconds, density * parameters


def free_port():
    """A TCP port nothing listens on now, for one repeat's process group: reusing one port for
    every repeat aborted a later repeat's gloo rendezvous (seen at the fifth of 15)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def record(db, name, params, value, unit):
    record_bench(db, "powersgd", name, params, value, unit)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--db", required=True, help="a bench database commsgd-bench has created")
    p.add_argument("--train", required=True, help="the commsgd-train binary")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--rank", type=int, default=2, help="PowerSGD's rank, both sides")
    p.add_argument("--start-iter", type=int, default=10,
                   help="iterations of plain allreduce first, both sides (the hook needs > 1)")
    p.add_argument("--warmup", type=int, default=10, help="compressed steps before timing")
    p.add_argument("--steps", type=int, default=40, help="timed steps")
    p.add_argument("--repeats", type=int, default=15,
                   help="pairs; the machines measured on drift more than 3 pairs settle")
    args = p.parse_args()
    if not os.path.isfile(args.db):
        p.error(f"{args.db}: no such database (run a commsgd-bench benchmark into it first)")
    if args.start_iter < 2:
        p.error("--start-iter: PyTorch's hook needs at least 2")

    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    hook_seconds, ours_seconds, ratios = [], [], []
    for repeat in range(args.repeats):
        queue = mp.get_context("spawn").SimpleQueue()
        os.environ["MASTER_PORT"] = str(free_port())
        mp.spawn(ddp_with_hook, args=(args, queue), nprocs=args.workers)
        hook, hook_entries = queue.get()
        ours, our_entries = commsgd_powersgd(args)
        hook_seconds.append(hook)
        ours_seconds.append(ours)
        ratios.append(hook / ours)
        print(f"repeat {repeat + 1}: DDP + powerSGD_hook {1e3 * hook:.1f} ms a step, "
              f"{hook_entries:.0f} entries sent; commsgd powersgd {1e3 * ours:.1f} ms, "
              f"{our_entries:.0f} entries")

    params = {"model": "resnet20", "shape": [3, 32, 32], "batch_size": args.batch_size,
              "workers": args.workers, "rank": args.rank, "start_iter": args.start_iter,
              "steps": args.steps, "warmup": args.warmup, "repeats": args.repeats,
              "threads": 1, "backend": "gloo"}
    record(args.db, "hook_step", params, statistics.median(hook_seconds), "s")
    record(args.db, "commsgd_step", params, statistics.median(ours_seconds), "s")
    record(args.db, "hook_over_commsgd", params, statistics.median(ratios), "x")
    record(args.db, "hook_entries", params, hook_entries, "entries")
    record(args.db, "commsgd_entries", params, our_entries, "entries")
    print(f"DDP + powerSGD_hook over commsgd powersgd, step time: {statistics.median(ratios):.2f}x "
          f"(median of {args.repeats}, pair by pair); entries a rank sends a compressed step: "
          f"hook {hook_entries:.0f}, commsgd {our_entries:.0f}; recorded in {args.db}")


if __name__ == "__main__":
    main()
