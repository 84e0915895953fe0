#!/usr/bin/python3
"""commsgd's image-folder loader against torchvision's ImageFolder and DataLoader, per core.

Both read the same JPEGs, which this script writes (--images of about 500x375, the size of an
average ILSVRC-2012 photograph, JPEG quality --quality with 4:2:0 chroma, content made of
smooth shading, texture and edges so that the entropy-coded data is as large as a photograph's),
and both do what an ImageNet training epoch does to each: decode, RandomResizedCrop(224),
horizontal flip, to float and normalise. torchvision: ImageFolder (PIL) in a DataLoader with no
worker processes and torch.set_num_threads(1), the main process decoding; commsgd:
`commsgd-bench image-loader --threads 1`. One core each; the two alternate --repeats times. Records
the images per second of each and the median of the pairs' ratios as bench rows of --db (suite
'loader'), a database commsgd-bench has created, and prints them with the cores a GPU training
ResNet-50 at --gpu-images-per-s would need at commsgd's rate.

  /usr/bin/python3 tests/bench/loader_vs_torchvision.py --db results/performance/bench.sqlite \\
      --bench build/release/tests/bench/commsgd-bench
"""
import argparse
import os
import re
import statistics
import subprocess
import tempfile
import time

import numpy as np
import torch
import torchvision
from PIL import Image
from torchvision import transforms

from ddp_baseline import record as record_bench  # this directory's

CLASSES = 4


def photograph(rng, width, height):
    """Shading at several scales, a texture and a few hard-edged shapes: what makes a photo's JPEG
    as large as it is (flat or pure-noise images are far smaller or far larger)."""
    image = np.zeros((height, width, 3))
    for cells, weight in ((3, 90), (12, 45), (48, 20)):
        # Random values on a (cells + 1)^2 grid, interpolated bilinearly over the image.
        g = rng.uniform(-1, 1, (cells + 1, cells + 1, 3))
        ys = np.linspace(0, cells, height)
        xs = np.linspace(0, cells, width)
        y0 = np.floor(ys).astype(int).clip(0, cells - 1)
        x0 = np.floor(xs).astype(int).clip(0, cells - 1)
        fy, fx = (ys - y0)[:, None, None], (xs - x0)[None, :, None]
        image += weight * ((1 - fy) * (1 - fx) * g[y0][:, x0] + (1 - fy) * fx * g[y0][:, x0 + 1]
                           + fy * (1 - fx) * g[y0 + 1][:, x0] + fy * fx * g[y0 + 1][:, x0 + 1])
    image += rng.normal(0, 7, (height, width, 1))  # grain and fine texture
    for _ in range(6):
        x, y = rng.integers(0, width), rng.integers(0, height)
        w, h = rng.integers(20, width // 2), rng.integers(20, height // 2)
        image[y:y + h, x:x + w] += rng.uniform(-60, 60, 3)
    image += rng.uniform(60, 190, 3)
    return Image.fromarray(image.clip(0, 255).astype(np.uint8))


def write_images(root, count, quality, seed):
    rng = np.random.default_rng(seed)
    sizes = []
    for i in range(count):
        folder = os.path.join(root, f"class{i % CLASSES}")
        os.makedirs(folder, exist_ok=True)
        # Landscape mostly, as ILSVRC's photographs, around 500x375.
        width, height = (500, 375) if i % 4 else (375, 500)
        path = os.path.join(folder, f"img{i:05d}.JPEG")
        photograph(rng, width, height).save(path, quality=quality, subsampling=2)
        sizes.append(os.path.getsize(path))
    return statistics.mean(sizes)


def torchvision_rate(root, batch_size):
    torch.set_num_threads(1)
    dataset = torchvision.datasets.ImageFolder(root, transforms.Compose([
        transforms.RandomResizedCrop(224),
        transforms.RandomHorizontalFlip(),
        transforms.ToTensor(),
        transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])]))
    loader = torch.utils.data.DataLoader(dataset, batch_size=batch_size, shuffle=True,
                                         num_workers=0)
    start = time.perf_counter()
    images = sum(len(labels) for _, labels in loader)
    return images / (time.perf_counter() - start)


def commsgd_rate(bench, root, batch_size):
    out = subprocess.run([bench, "image-loader", "--folder", root, "--threads", "1",
                          "--batch-size", str(batch_size)],
                         check=True, capture_output=True, text=True).stdout
    return float(re.search(r"images_per_s ([0-9.]+)", out).group(1))


def record(db, name, params, value, unit):
    record_bench(db, "loader", name, params, value, unit, torchvision=torchvision.__version__,
                 pil=Image.__version__)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--db", required=True, help="a bench database commsgd-bench has created")
    p.add_argument("--bench", required=True, help="the commsgd-bench binary")
    p.add_argument("--images", type=int, default=400)
    p.add_argument("--quality", type=int, default=90)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--repeats", type=int, default=15)
    p.add_argument("--gpu-images-per-s", type=float, default=3000,
                   help="ResNet-50 training on one H100, for the cores it would need")
    args = p.parse_args()
    if not os.path.isfile(args.db):
        p.error(f"{args.db}: no such database (run a commsgd-bench benchmark into it first)")
    if args.images < CLASSES:
        p.error(f"--images: at least {CLASSES}, one a class")

    with tempfile.TemporaryDirectory() as scratch:
        mean_bytes = write_images(scratch, args.images, args.quality, seed=1)
        theirs, ours, ratios = [], [], []
        for repeat in range(args.repeats):
            theirs.append(torchvision_rate(scratch, args.batch_size))
            ours.append(commsgd_rate(args.bench, scratch, args.batch_size))
            ratios.append(ours[-1] / theirs[-1])
            print(f"repeat {repeat + 1}: torchvision {theirs[-1]:.1f} images/s, "
                  f"commsgd {ours[-1]:.1f} images/s, {ratios[-1]:.2f}x")

    params = {"images": args.images, "width": 500, "height": 375, "quality": args.quality,
              "mean_bytes": round(mean_bytes), "image_size": 224, "batch_size": args.batch_size,
              "threads": 1, "repeats": args.repeats}
    record(args.db, "torchvision_images_per_s", params, statistics.median(theirs), "images/s")
    record(args.db, "commsgd_images_per_s", params, statistics.median(ours), "images/s")
    record(args.db, "commsgd_over_torchvision", params, statistics.median(ratios), "x")
    cores = args.gpu_images_per_s / statistics.median(ours)
    print(f"commsgd over torchvision, images per second per core: {statistics.median(ratios):.2f}x "
          f"(median of {args.repeats} pairs; {statistics.median(ours):.0f} against "
          f"{statistics.median(theirs):.0f}); JPEGs of {mean_bytes / 1024:.0f} KiB on average; "
          f"{args.gpu_images_per_s:.0f} images/s would take {cores:.1f} such cores; "
          f"recorded in {args.db}")


if __name__ == "__main__":
    main()
