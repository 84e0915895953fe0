#include "tests/bench/machine.hpp"

#include <ATen/Parallel.h>
#include <fmt/core.h>
#include <torch/torch.h>
#include <torch/version.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <fstream>
#include <thread>

#include "algorithms/stopwatch.hpp"
#include "trainer/git_revision.hpp"

namespace commsgd::bench {
namespace {

// The value of the first line of `file` that starts with `key`, after its separator; "" if none.
std::string first_value(const char* file, const std::string& key, char separator) {
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with(key)) continue;
    std::string value = line.substr(line.find(separator) + 1);
    value.erase(0, value.find_first_not_of(" \t\""));
    while (!value.empty() && (value.back() == '"' || value.back() == ' ')) value.pop_back();
    return value;
  }
  return {};
}

// What a reader needs to weigh a time: the processor and its cores, the system, the LibTorch.
const nlohmann::json& machine() {
  static const nlohmann::json described = {
      {"cpu", first_value("/proc/cpuinfo", "model name", ':')},
      {"cores", std::thread::hardware_concurrency()},
      {"os", first_value("/etc/os-release", "PRETTY_NAME", '=')},
      {"libtorch", TORCH_VERSION}};
  return described;
}

}  // namespace

record::BenchRow bench_row(const std::string& suite, const std::string& name,
                           const nlohmann::json& params, double value, const std::string& unit) {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  return {suite, name, params.dump(), value, unit, host, machine().dump(), git_revision()};
}

void record_bench(const std::string& db, const std::vector<record::BenchRow>& rows) {
  record::RunDatabase(db).add_bench(rows);
  fmt::print("recorded in {} (bench table)\n", db);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

namespace {

struct Mlp {
  int hidden = 0;
  torch::Tensor input, w1, w2;
};

const Mlp& mlp_of_width(int hidden) {
  [[maybe_unused]] static const bool one_thread = (at::set_num_threads(1), true);
  static Mlp mlp;
  if (mlp.hidden != hidden) {
    const std::int64_t rows = std::max(1, 16384 / hidden);
    mlp = {hidden, torch::randn({rows, 64}), torch::randn({64, hidden}, torch::requires_grad()),
           torch::randn({hidden, 10}, torch::requires_grad())};
  }
  return mlp;
}

}  // namespace

float compute_for(double seconds, int hidden) {
  const Mlp& mlp = mlp_of_width(hidden);
  const algorithms::Stopwatch computing;
  float loss_sum = 0;
  do {
    const torch::Tensor loss = torch::relu(mlp.input.mm(mlp.w1)).mm(mlp.w2).square().mean();
    loss.backward();
    loss_sum += loss.item<float>();
  } while (computing.seconds() < seconds);
  return loss_sum;
}

void add_compute_hidden_option(CLI::App& cmd, int& hidden) {
  cmd.add_option("--compute-hidden", hidden,
                 "Width of the MLP (64-N-10) computed before each timed operation: the model of "
                 "the runs this calibrates, whose step leaves the caches as this one does")
      ->check(CLI::Range(1, 1 << 16))
      ->capture_default_str();
}

}  // namespace commsgd::bench
