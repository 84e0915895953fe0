// A run database written through RunDatabase with round numbers, so that every view and report
// has a value known in advance (the comments in handmade_db.cpp derive each one).
#pragma once

#include <filesystem>
#include <string>

namespace commsgd::testing {

// Run ids of the hand-made database. All runs: model mlp, dataset synthetic, device cpu, batch 10.
struct HandmadeRuns {
  static constexpr const char* dense1 = "00000000-0000-4000-8000-000000000001";  // dense P=1
  static constexpr const char* topk1 = "00000000-0000-4000-8000-000000000002";   // topk P=1
  static constexpr const char* dense4 = "00000000-0000-4000-8000-000000000003";  // dense P=4
  static constexpr const char* topk4 = "00000000-0000-4000-8000-000000000004";   // topk P=4
  static constexpr const char* gtopk2 = "00000000-0000-4000-8000-000000000005";  // network eth
};

// Writes the database (a new file) with the five runs and four kernel benchmark rows.
void write_handmade_database(const std::filesystem::path& file);

}  // namespace commsgd::testing
