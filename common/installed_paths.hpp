// Where a commsgd program finds the files and programs it ships with, installed or in its build
// tree. An installed tree is relocatable (`cmake --install build --prefix DIR`, then move DIR):
// PREFIX/bin/<program> finds PREFIX/share/commsgd/<file> and PREFIX/bin/<sibling> from where it
// runs, not from where it was built. Run from the build tree, where neither exists beside it, it
// uses the source tree's file and the build tree's program it was configured with.
#pragma once

#include <filesystem>
#include <string_view>

namespace commsgd {

// PREFIX/share/commsgd/<relative> if the running program is PREFIX/bin/<name> and the file is
// there, else `in_source`.
std::filesystem::path shipped_file(std::string_view relative,
                                   const std::filesystem::path& in_source);

// The program `name` beside the running one, if it is there, else `in_build`.
std::filesystem::path sibling_program(std::string_view name, const std::filesystem::path& in_build);

}  // namespace commsgd
