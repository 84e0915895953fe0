#include "tests/bench/machine.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <thread>

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

}  // namespace commsgd::bench
