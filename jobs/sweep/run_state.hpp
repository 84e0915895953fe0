// What a sweep has already done: a point is done when its database holds a `completed` run.
#pragma once

#include <filesystem>

namespace commsgd::sweep {

// False when the file does not exist; throws SweepError when it exists but cannot be read as a
// run database (a sweep must not silently run a point twice, or skip one).
bool has_completed_run(const std::filesystem::path& database);

}  // namespace commsgd::sweep
