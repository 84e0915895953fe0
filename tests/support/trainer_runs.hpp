#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/support/process.hpp"

namespace commsgd::testing {

// A test that launches commsgd-train under mpirun, in a scratch directory of its own.
class TrainerRuns : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;
  // mpirun -np ranks commsgd-train args... --quiet
  ProcessResult train(int ranks, std::vector<std::string> args);
  // The same with another build of commsgd-train (one with algorithms of its own).
  ProcessResult train_with(const std::string& program, int ranks, std::vector<std::string> args);

  std::filesystem::path dir_;
};

// The convergence tests' run: the MLP on the digits set, 12 epochs of batch 16 at lr 0.05,
// recorded in `db`; the algorithm's flags go after these.
std::vector<std::string> digits_mlp_flags(const std::string& db);

// The rows of a query on a database file, every field as text ("NULL" for NULL).
std::vector<std::vector<std::string>> query(const std::filesystem::path& db,
                                            const std::string& sql);

// Whether `table` of a database that a trainer may still be creating has rows yet; false while
// the file or its schema does not exist.
bool has_rows(const std::filesystem::path& db, const std::string& table);

// A file of raw float32 values (--dump-params).
std::vector<float> read_floats(const std::filesystem::path& path);

// ‖x − reference‖ / ‖reference‖, in double: how far apart two runs' final parameters are. The
// sizes must match (checked by the caller, so that a mismatch fails the test rather than this).
double relative_distance(const std::vector<float>& x, const std::vector<float>& reference);

}  // namespace commsgd::testing
