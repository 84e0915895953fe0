#pragma once

namespace commsgd {

// The commit the running program was built from, `git describe --always --dirty --abbrev=12` at
// build time (not at configure time: a build after a commit names the new one); "unknown" when
// built outside a git checkout. Runs and benchmark rows record it.
const char* git_revision();

}  // namespace commsgd
