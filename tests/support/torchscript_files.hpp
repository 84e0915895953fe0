// TorchScript files for the tests of --model torchscript, written with Debian's python3-torch
// (scripts/install-deps.sh) by the project's own export script and a script of broken fixtures.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace commsgd::testing {

// tools/export_torchscript.py MODEL FILE ARGS...; throws std::runtime_error with its output if
// it fails.
void export_torchscript(const std::string& model, const std::filesystem::path& file,
                        const std::vector<std::string>& args);

// tests/support/torchscript_fixtures.py DIR: five_classes.pt, wrong_rank.pt, no_parameters.pt,
// and rank0.pt and rank1.pt, two modules of the same parameters and different code.
void write_torchscript_fixtures(const std::filesystem::path& dir);

}  // namespace commsgd::testing
