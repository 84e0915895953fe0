#include "tests/bench/machine.hpp"

#include <unistd.h>

#include <thread>

namespace commsgd::bench {

record::BenchRow bench_row(const std::string& suite, const std::string& name,
                           const nlohmann::json& params, double value, const std::string& unit) {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  const nlohmann::json machine = {{"cores", std::thread::hardware_concurrency()}};
  return {suite, name, params.dump(), value, unit, host, machine.dump(), COMMSGD_GIT_REVISION};
}

}  // namespace commsgd::bench
