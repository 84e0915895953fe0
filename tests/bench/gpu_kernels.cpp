// gpu-kernels: the CUDA selectors (exact, dgc, gaussian, random) on N(0,1) data in device memory,
// against one device-to-device copy of the same buffer (read + write: the yardstick for a pass over
// it), the one-pass floor (count_abs_greater at the exact k-th threshold) and torch::topk(x.abs(),
// k) on the same buffer when LibTorch was built with CUDA: one row gives the Gaussian-k paper's
// selection-time ordering on this GPU. Interleaved per repeat, each timed from a synchronized
// device to a synchronized device, so launch costs count as they do in training. Targets at d =
// 25M, ρ = 0.001: torch::topk / exact >= 3, gaussian / copy <= 4.
#include <cuda_runtime_api.h>
#include <fmt/core.h>
#include <torch/cuda.h>
#include <torch/torch.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "algorithms/stopwatch.hpp"
#include "kernels/cuda/sampling.hpp"
#include "kernels/cuda/threshold.hpp"
#include "kernels/cuda/topk.hpp"
#include "tests/bench/benchmarks.hpp"
#include "tests/bench/machine.hpp"
#include "tests/bench/selection_bench.hpp"

namespace commsgd::bench {
namespace {

std::string device_name() {
  int device = 0;
  cudaDeviceProp properties{};
  kernels::cuda::check(cudaGetDevice(&device), "cudaGetDevice");
  kernels::cuda::check(cudaGetDeviceProperties(&properties, device), "cudaGetDeviceProperties");
  return properties.name;
}

void run(const SelectionSettings& s) {
  int devices = 0;
  const cudaError_t status = cudaGetDeviceCount(&devices);
  if (status != cudaSuccess || devices == 0) {
    fmt::print(stderr, "commsgd-bench gpu-kernels: no CUDA device ({})\n",
               cudaGetErrorString(status));
    throw CLI::RuntimeError(2);
  }
  const bool with_torch = torch::cuda::is_available();
  const std::string gpu = device_name();
  fmt::print("{}; torch::topk {}\n", gpu,
             with_torch ? "on the same buffer" : "not measured (LibTorch without CUDA)");
  fmt::print("{:>10} {:>7} {:>7} | {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>9} | {:>11} {:>13}\n",
             "d", "density", "k", "copy", "floor", "exact", "dgc", "gaussian", "random", "torch",
             "torch/exact", "gaussian/copy");
  const cudaStream_t stream = nullptr;  // the legacy default stream, which torch uses too
  std::vector<record::BenchRow> rows;
  for (const std::size_t d : s.sizes) {
    const std::vector<float> host = normal_data(d);
    kernels::cuda::DeviceArray<float> x(d, stream), copy(d, stream);
    kernels::cuda::check(
        cudaMemcpy(x.data(), host.data(), d * sizeof(float), cudaMemcpyHostToDevice), "upload");
    kernels::cuda::DeviceArray<std::uint32_t> count(1, stream);
    for (const double density : s.densities) {
      const auto k = std::max<std::size_t>(1, static_cast<std::size_t>(std::ceil(density * d)));
      std::vector<float> sorted = host;
      std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(k - 1),
                       sorted.end(), [](float a, float b) { return std::abs(a) > std::abs(b); });
      const float kth = std::abs(sorted[k - 1]);
      kernels::cuda::TopkSelector topk;
      kernels::cuda::DgcSelector dgc;
      kernels::cuda::GaussianSelector gaussian;
      kernels::cuda::RandomSelector random;
      std::uint64_t seed = 0;
      kernels::cuda::DeviceSparseSet out;
      out.reserve(d, stream);
      std::vector<Candidate> candidates = {
          {"copy",
           [&] {
             kernels::cuda::check(cudaMemcpyAsync(copy.data(), x.data(), d * sizeof(float),
                                                  cudaMemcpyDeviceToDevice, stream),
                                  "copy");
           },
           {}},
          {"floor",
           [&] { kernels::cuda::count_abs_greater(x.data(), d, kth, count.data(), stream); },
           {}},
          {"exact", [&] { topk.select(x.data(), d, k, out, stream); }, {}},
          {"dgc", [&] { dgc.select(x.data(), d, k, out, stream); }, {}},
          {"gaussian", [&] { gaussian.select(x.data(), d, k, density, out, stream); }, {}},
          {"random", [&] { random.select(x.data(), d, k, ++seed, out, stream); }, {}}};
      if (with_torch) {
        const torch::Tensor tensor = torch::from_blob(x.data(), {static_cast<std::int64_t>(d)},
                                                      torch::TensorOptions().device(torch::kCUDA));
        candidates.push_back(
            {"torch_topk",
             [tensor, k] { torch::topk(tensor.abs(), static_cast<std::int64_t>(k)); },
             {}});
      }
      for (int r = 0; r <= s.repeats; ++r) {  // the first round warms up (allocations, caches)
        for (Candidate& c : candidates) {
          kernels::cuda::check(cudaDeviceSynchronize(), "synchronize");
          const algorithms::Stopwatch watch;
          c.run();
          kernels::cuda::check(cudaDeviceSynchronize(), c.name.c_str());
          if (r > 0) c.seconds.push_back(watch.seconds());
        }
      }
      const nlohmann::json params = {
          {"d", d}, {"density", density}, {"k", k}, {"device", gpu}, {"repeats", s.repeats}};
      std::map<std::string, double> ms;
      for (const Candidate& c : candidates) {
        rows.push_back(bench_row("gpu_kernels", c.name, params, median(c.seconds), "s"));
        ms[c.name] = 1e3 * median(c.seconds);
      }
      const double gaussian_over_copy = ms["gaussian"] / ms["copy"];
      rows.push_back(
          bench_row("gpu_kernels", "gaussian_over_copy", params, gaussian_over_copy, "ratio"));
      std::string torch_ms = "n/a", torch_ratio = "n/a";
      if (with_torch) {
        const double torch_over_exact = ms["torch_topk"] / ms["exact"];
        rows.push_back(
            bench_row("gpu_kernels", "torch_over_exact", params, torch_over_exact, "ratio"));
        torch_ms = fmt::format("{:.3f}", ms["torch_topk"]);
        torch_ratio = fmt::format("{:.1f}", torch_over_exact);
      }
      fmt::print(
          "{:>10} {:>7} {:>7} | {:>8.3f} {:>8.3f} {:>8.3f} {:>8.3f} {:>8.3f} {:>8.3f} {:>9} | "
          "{:>11} {:>13.2f}\n",
          d, density, k, ms["copy"], ms["floor"], ms["exact"], ms["dgc"], ms["gaussian"],
          ms["random"], torch_ms, torch_ratio, gaussian_over_copy);
    }
  }
  fmt::print("times in ms, median of {} interleaved repeats after one warm-up round\n", s.repeats);
  record_bench(s.db, rows);
}

}  // namespace

void add_gpu_kernels(CLI::App& app) {
  auto settings = std::make_shared<SelectionSettings>();
  settings->repeats = 20;  // milliseconds each: more repeats cost little and steady the median
  CLI::App* cmd = app.add_subcommand(
      "gpu-kernels",
      "CUDA selectors against a device-to-device copy, the one-pass floor and torch::topk");
  add_selection_options(*cmd, *settings);
  cmd->callback([settings] { run(*settings); });
}

}  // namespace commsgd::bench
