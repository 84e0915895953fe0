// Drawing a figure: analysis/plot.py (matplotlib, run by COMMSGD_PYTHON) reads the figure's data
// (plot_data.hpp) on its stdin and writes PNG, SVG or PDF by the output file's suffix. It prints
// one line per series it drew ("series<TAB>label<TAB>points") and the figure's size in pixels
// ("figure<TAB>width<TAB>height"), which go to stdout: what the figure shows, checkable as text.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>

namespace commsgd::report {

// Throws InputError unless `output` ends in .png, .svg or .pdf.
void check_figure_path(const std::filesystem::path& output);

// Throws std::runtime_error when the script cannot run or fails (it has said why on stderr).
void draw(const nlohmann::json& data, const std::filesystem::path& output);

}  // namespace commsgd::report
