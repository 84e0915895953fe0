// The process's wait limit (--comm-timeout, algorithms/comm/work.hpp) for one test, then the one
// it replaced.
#pragma once

#include "algorithms/comm/work.hpp"

namespace commsgd::testing {

class WaitLimitFor {
 public:
  explicit WaitLimitFor(double seconds) { comm::set_wait_limit_seconds(seconds); }
  ~WaitLimitFor() { comm::set_wait_limit_seconds(before_); }
  WaitLimitFor(const WaitLimitFor&) = delete;
  WaitLimitFor& operator=(const WaitLimitFor&) = delete;

 private:
  const double before_ = comm::wait_limit_seconds();
};

}  // namespace commsgd::testing
