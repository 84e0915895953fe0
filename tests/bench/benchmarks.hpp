#pragma once

#include <CLI/App.hpp>

namespace commsgd::bench {

// Each benchmark adds its subcommand to the app and runs when it is selected.
void add_trainer_overhead(CLI::App& app);
void add_torchscript_model(CLI::App& app);
void add_peak_memory(CLI::App& app);
void add_kernels(CLI::App& app);
void add_sign_bits(CLI::App& app);
void add_collectives(CLI::App& app);  // and merge-paths
void add_pingpong(CLI::App& app);
void add_merge(CLI::App& app);
void add_dense_overlap(CLI::App& app);
void add_image_loader(CLI::App& app);
void add_gpu_kernels(CLI::App& app);  // built with the CUDA kernels only

}  // namespace commsgd::bench
