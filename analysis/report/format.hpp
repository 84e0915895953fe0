// Writes a Table as aligned text (for people), Markdown (for notes and READMEs), CSV (for pandas
// and spreadsheets) or JSON (for scripts). CSV and JSON keep full precision; text and Markdown
// round to four significant digits.
#pragma once

#include <map>
#include <ostream>
#include <string>
#include <string_view>

#include "analysis/report/table.hpp"

namespace commsgd::report {

enum class Format { text, markdown, csv, json };

// --format's names for each Format.
const std::map<std::string, Format>& format_names();

void write_table(std::ostream& out, const Table& table, Format format);

// A value as the text format shows it (doubles to four significant digits, NULL as "-").
std::string value_text(const Value& v);

// Text as one Markdown table cell: on one line (a line break becomes a space, trailing spaces
// go), with no '|' that would start another cell.
std::string markdown_cell(std::string_view text);

}  // namespace commsgd::report
