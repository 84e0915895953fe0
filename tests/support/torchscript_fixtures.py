#!/usr/bin/python3
"""The TorchScript files tests/bad_inputs.tsv refers to, for 1x8x8 inputs and 10 classes (the
digits set): each one wrong in one way commsgd-train must refuse.

  torchscript_fixtures.py DIR
"""
import sys

import torch
from torch import nn


class FiveClasses(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x.flatten(1))


class OneLogitPerPixel(nn.Module):
    """Returns [N, 10, 1]: not a matrix of logits."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x.flatten(1)).unsqueeze(2)


class NoParameters(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.flatten(1)[:, :10]


class Relu(nn.Module):
    """Rank 0's file of the pair whose structure differs: the same parameters as Tanh's."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.relu(x.flatten(1)))


class Tanh(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.tanh(x.flatten(1)))


def main() -> None:
    out = sys.argv[1]
    for name, module in [("five_classes", FiveClasses()), ("wrong_rank", OneLogitPerPixel()),
                         ("no_parameters", NoParameters()), ("rank0", Relu()),
                         ("rank1", Tanh())]:
        torch.jit.script(module).save(f"{out}/{name}.pt")


if __name__ == "__main__":
    main()
