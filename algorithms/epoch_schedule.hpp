#pragma once

#include <string_view>
#include <vector>

namespace commsgd::algorithms {

// One "epoch:value" entry of a schedule flag such as --lr-schedule "81:0.1,122:0.1" or
// --density-schedule "0:0.004,1:0.001".
struct EpochValue {
  int epoch = 0;
  double value = 0;
};

// Parses "e1:v1,e2:v2,..." with epochs >= 0 strictly increasing and finite values > 0. An empty
// string is an empty schedule. Throws std::invalid_argument quoting the bad entry.
std::vector<EpochValue> parse_epoch_values(std::string_view text);

}  // namespace commsgd::algorithms
