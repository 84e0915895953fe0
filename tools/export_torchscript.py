#!/usr/bin/python3
"""Exports a PyTorch model as TorchScript, for `commsgd-train --model torchscript --model-file`.

commsgd-train loads the file with LibTorch (no Python at run time) and trains its parameters with
any --algo. The module must take a batch of the data set's samples, [N, C, H, W] floats, and
return logits [N, classes]. Runs with Debian's python3-torch (scripts/install-deps.sh):

  tools/export_torchscript.py resnet20 resnet20.pt --channels 3 --classes 10
  tools/export_torchscript.py small-cnn cnn.pt --channels 1 --height 8 --width 8 --classes 10
  tools/export_torchscript.py my_models.py:Net net.pt --channels 3 --height 32 --width 32

The first two are built-in examples: the CIFAR ResNet-20 of He et al. (2016), layer for layer the
network of `--model resnet20`, and a small CNN written as a user would. The third exports your
own class: FILE.py:CLASS is imported from FILE.py and built as CLASS(channels, classes). The
module is compiled with torch.jit.script (torch.jit.trace with --trace, for modules that script
cannot compile: tracing records one forward pass on a zero batch, so data-dependent control flow
is frozen) and checked on a batch of two samples before it is saved.
"""
import argparse
import importlib.util
import sys

import torch
import torch.nn.functional as F
from torch import nn


class BasicBlock(nn.Module):
    """The CIFAR residual block with the parameter-free "option A" shortcut: subsample by the
    stride and zero-pad the new channels."""

    def __init__(self, inputs: int, outputs: int, stride: int):
        super().__init__()
        self.conv1 = nn.Conv2d(inputs, outputs, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(outputs)
        self.conv2 = nn.Conv2d(outputs, outputs, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(outputs)
        self.stride = stride
        self.pad_channels = outputs - inputs

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        shortcut = x
        if self.stride != 1 or self.pad_channels != 0:
            shortcut = x[:, :, :: self.stride, :: self.stride]
            before = self.pad_channels // 2
            shortcut = F.pad(shortcut, [0, 0, 0, 0, before, self.pad_channels - before])
        return F.relu(out + shortcut)


class CifarResNet(nn.Module):
    """ResNet of depth 6n + 2 for CIFAR: three stages of n blocks, 16, 32 and 64 channels."""

    def __init__(self, depth: int, channels: int, classes: int):
        super().__init__()
        self.conv = nn.Conv2d(channels, 16, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(16)
        blocks = []
        inputs = 16
        for outputs in (16, 32, 64):
            for b in range((depth - 2) // 6):
                stride = 2 if b == 0 and outputs != 16 else 1
                blocks.append(BasicBlock(inputs, outputs, stride))
                inputs = outputs
        self.blocks = nn.Sequential(*blocks)
        self.fc = nn.Linear(64, classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.relu(self.bn(self.conv(x)))
        x = self.blocks(x)
        x = F.adaptive_avg_pool2d(x, 1)
        return self.fc(x.flatten(1))


class SmallCnn(nn.Module):
    """A user's own network, as one would write it: two convolutions with pooling, then a linear
    classifier sized for the input."""

    def __init__(self, channels: int, classes: int, height: int = 8, width: int = 8):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(channels, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.classifier = nn.Linear(32 * (height // 4) * (width // 4), classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.features(x).flatten(1))


def build(name: str, args: argparse.Namespace) -> nn.Module:
    if name == "resnet20":
        return CifarResNet(20, args.channels, args.classes)
    if name == "small-cnn":
        return SmallCnn(args.channels, args.classes, args.height, args.width)
    path, _, class_name = name.rpartition(":")
    if not path.endswith(".py") or not class_name:
        sys.exit(f"export_torchscript.py: model '{name}': expected resnet20, small-cnn or "
                 "FILE.py:CLASS")
    spec = importlib.util.spec_from_file_location("user_model", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, class_name)(args.channels, args.classes)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", help="resnet20, small-cnn or FILE.py:CLASS")
    parser.add_argument("output", help="the TorchScript file to write (.pt)")
    parser.add_argument("--channels", type=int, default=3, help="input channels (default 3)")
    parser.add_argument("--height", type=int, default=32, help="input height (default 32)")
    parser.add_argument("--width", type=int, default=32, help="input width (default 32)")
    parser.add_argument("--classes", type=int, default=10, help="output classes (default 10)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the initial weights")
    parser.add_argument("--trace", action="store_true",
                        help="torch.jit.trace instead of torch.jit.script")
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    model = build(args.model, args)
    example = torch.zeros(2, args.channels, args.height, args.width)
    scripted = torch.jit.trace(model, example) if args.trace else torch.jit.script(model)
    scripted.eval()
    with torch.no_grad():
        logits = scripted(example)
    if logits.shape != (2, args.classes):
        sys.exit(f"export_torchscript.py: the model returns {tuple(logits.shape)} for a batch of "
                 f"2 samples; commsgd-train expects (2, {args.classes}) logits")
    scripted.train()
    scripted.save(args.output)
    parameters = sum(p.numel() for p in scripted.parameters() if p.requires_grad)
    print(f"{args.output}: {args.model}, {parameters} trainable parameters, input "
          f"[N, {args.channels}, {args.height}, {args.width}], {args.classes} classes")


if __name__ == "__main__":
    main()
