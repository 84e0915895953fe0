#include "tests/bench/machine.hpp"

#include <ATen/Parallel.h>
#include <fmt/core.h>
#include <torch/torch.h>
#include <unistd.h>

#include <algorithm>
#include <thread>

#include "algorithms/stopwatch.hpp"

namespace commsgd::bench {

record::BenchRow bench_row(const std::string& suite, const std::string& name,
                           const nlohmann::json& params, double value, const std::string& unit) {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  const nlohmann::json machine = {{"cores", std::thread::hardware_concurrency()}};
  return {suite, name, params.dump(), value, unit, host, machine.dump(), COMMSGD_GIT_REVISION};
}

void record_bench(const std::string& db, const std::vector<record::BenchRow>& rows) {
  record::RunDatabase(db).add_bench(rows);
  fmt::print("recorded in {} (bench table)\n", db);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

float compute_for(double seconds) {
  // The digits MLP's shape, narrower (64-512-10, batch 32: about 0.1 ms a step), so that short
  // computations end close to `seconds`.
  [[maybe_unused]] static const bool one_thread = (at::set_num_threads(1), true);
  static const torch::Tensor input = torch::randn({32, 64});
  static const torch::Tensor w1 = torch::randn({64, 512}, torch::requires_grad());
  static const torch::Tensor w2 = torch::randn({512, 10}, torch::requires_grad());
  const algorithms::Stopwatch computing;
  float loss_sum = 0;
  do {
    const torch::Tensor loss = torch::relu(input.mm(w1)).mm(w2).square().mean();
    loss.backward();
    loss_sum += loss.item<float>();
  } while (computing.seconds() < seconds);
  return loss_sum;
}

}  // namespace commsgd::bench
