// CSV: numeric feature columns followed by an integer class label.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

#include "trainer/data/dataset.hpp"
#include "trainer/data/loaders.hpp"

namespace commsgd::data {

namespace {

constexpr std::string_view kLoader = "csv";

struct Table {
  std::size_t feature_count = 0;
  std::vector<float> features;  // row-major, feature_count per row
  std::vector<std::int32_t> labels;
};

DataError file_error(const std::string& file, const std::string& problem) {
  return DataError(std::string(kLoader) + ": " + file + ": " + problem);
}

DataError line_error(const std::string& file, std::size_t line, const std::string& problem) {
  return file_error(file, "line " + std::to_string(line) + ": " + problem);
}

std::string_view trim(std::string_view text) {
  constexpr std::string_view kBlank = " \t\r";
  const std::size_t first = text.find_first_not_of(kBlank);
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(kBlank) - first + 1);
}

void split_fields(std::string_view line, std::vector<std::string_view>& fields) {
  fields.clear();
  for (;;) {
    const std::size_t comma = line.find(',');
    fields.push_back(trim(line.substr(0, comma)));
    if (comma == std::string_view::npos) return;
    line.remove_prefix(comma + 1);
  }
}

std::optional<float> parse_feature(std::string_view field) {
  double value = 0;
  const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (error != std::errc{} || end != field.data() + field.size()) return std::nullopt;
  const auto narrowed = static_cast<float>(value);
  if (!std::isfinite(narrowed)) return std::nullopt;
  return narrowed;
}

std::optional<std::int32_t> parse_label(std::string_view field) {
  std::int32_t value = 0;
  const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (error != std::errc{} || end != field.data() + field.size()) return std::nullopt;
  // The upper bound keeps num_classes = max label + 1 representable.
  if (value < 0 || value == std::numeric_limits<std::int32_t>::max()) return std::nullopt;
  return value;
}

// Header detection is content-based because CSV has no header marker: a first
// line that is not entirely numeric cannot be a data row.
bool is_header(const std::vector<std::string_view>& fields) {
  return std::ranges::any_of(fields, [](std::string_view f) { return !parse_feature(f); });
}

void append_row(const std::string& file, std::size_t line,
                const std::vector<std::string_view>& fields, Table& table) {
  if (fields.size() != table.feature_count + 1) {
    throw line_error(file, line,
                     std::to_string(fields.size()) + " columns, expected " +
                         std::to_string(table.feature_count + 1));
  }
  for (std::size_t column = 0; column < table.feature_count; ++column) {
    const std::optional<float> value = parse_feature(fields[column]);
    if (!value) {
      throw line_error(file, line,
                       "column " + std::to_string(column + 1) + ": '" +
                           std::string(fields[column]) + "' is not a finite number");
    }
    table.features.push_back(*value);
  }
  const std::optional<std::int32_t> label = parse_label(fields.back());
  if (!label) {
    throw line_error(file, line,
                     "label '" + std::string(fields.back()) + "' is not a non-negative integer");
  }
  table.labels.push_back(*label);
}

Table parse_table(const std::string& file, std::string_view text) {
  Table table;
  std::vector<std::string_view> fields;
  bool first_row = true;
  for (std::size_t line = 1; !text.empty(); ++line) {
    const std::size_t newline = text.find('\n');
    const std::string_view content = trim(text.substr(0, newline));
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    if (content.empty()) continue;

    split_fields(content, fields);
    if (first_row) {
      first_row = false;
      if (fields.size() < 2) {
        throw line_error(file, line, "need at least one feature column and a label column");
      }
      table.feature_count = fields.size() - 1;
      if (is_header(fields)) continue;
    }
    append_row(file, line, fields, table);
  }
  if (table.labels.empty()) throw file_error(file, "no data rows");
  return table;
}

// Whether row i of n is one of the val_rows validation rows. Interleaved: evenly spread
// through the file (every 5th row for 0.2), so a file sorted by writer or class keeps
// all of them on both sides; tail: the last val_rows rows.
bool is_validation_row(ValSplit how, std::size_t i, std::size_t n, std::size_t val_rows) {
  if (how == ValSplit::tail) return i >= n - val_rows;
  return (i + 1) * val_rows / n > i * val_rows / n;
}

// Splits the table's rows into (train, validation), keeping file order within each.
std::pair<Split, Split> split_rows(const Table& table, ValSplit how, std::size_t val_rows) {
  const std::size_t width = table.feature_count;
  const std::size_t n = table.labels.size();
  std::pair<Split, Split> splits;
  for (std::size_t i = 0; i < n; ++i) {
    Split& split = is_validation_row(how, i, n, val_rows) ? splits.second : splits.first;
    const auto row = table.features.begin() + static_cast<std::ptrdiff_t>(i * width);
    split.features.insert(split.features.end(), row, row + static_cast<std::ptrdiff_t>(width));
    split.labels.push_back(table.labels[i]);
  }
  return splits;
}

// Standardizes every feature with train-split statistics only, so no
// information from the validation rows leaks into the model's inputs.
void standardize(Split& train, Split& validation, std::size_t feature_count) {
  std::vector<double> mean(feature_count, 0.0);
  std::vector<double> sq_dev(feature_count, 0.0);
  const std::size_t rows = train.size();
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t f = 0; f < feature_count; ++f) {
      mean[f] += train.features[r * feature_count + f];
    }
  }
  for (double& m : mean) m /= static_cast<double>(rows);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t f = 0; f < feature_count; ++f) {
      const double d = train.features[r * feature_count + f] - mean[f];
      sq_dev[f] += d * d;
    }
  }
  std::vector<double> stddev(feature_count);
  for (std::size_t f = 0; f < feature_count; ++f) {
    const double s = std::sqrt(sq_dev[f] / static_cast<double>(rows));
    stddev[f] = s < 1e-6 ? 1.0 : s;  // a constant feature is only centred
  }
  for (Split* split : {&train, &validation}) {
    for (std::size_t i = 0; i < split->features.size(); ++i) {
      const std::size_t f = i % feature_count;
      split->features[i] = static_cast<float>((split->features[i] - mean[f]) / stddev[f]);
    }
  }
}

std::string shape_text(const SampleShape& shape) {
  return "{" + std::to_string(shape.channels) + "," + std::to_string(shape.height) + "," +
         std::to_string(shape.width) + "}";
}

}  // namespace

Dataset load_csv(const DatasetOptions& options) {
  if (!(options.val_fraction >= 0.0 && options.val_fraction < 1.0)) {
    std::ostringstream message;
    message << "csv: val_fraction " << options.val_fraction << " is outside [0, 1)";
    throw DataError(message.str());
  }
  if (options.csv_shape) require_positive_shape(kLoader, "csv_shape", *options.csv_shape);

  const std::vector<std::uint8_t> bytes = read_file_bytes(kLoader, options.path);
  const Table table = parse_table(
      options.path, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));

  const SampleShape shape =
      options.csv_shape.value_or(SampleShape{1, 1, static_cast<int>(table.feature_count)});
  if (shape.numel() != table.feature_count) {
    throw file_error(options.path, "csv_shape " + shape_text(shape) + " has " +
                                       std::to_string(shape.numel()) +
                                       " elements but the file has " +
                                       std::to_string(table.feature_count) + " feature columns");
  }

  const std::size_t rows = table.labels.size();
  // The epsilon absorbs binary rounding (100 * 0.29 == 28.999...) so the split
  // matches the decimal arithmetic a user expects; min() keeps one train row.
  const double exact_val_rows = static_cast<double>(rows) * options.val_fraction;
  const auto val_rows =
      std::min(rows - 1, static_cast<std::size_t>(std::floor(exact_val_rows + 1e-9)));
  Dataset dataset;
  dataset.name = kLoader;
  dataset.shape = shape;
  dataset.num_classes = *std::ranges::max_element(table.labels) + 1;
  std::tie(dataset.train, dataset.validation) = split_rows(table, options.val_split, val_rows);
  if (options.normalize) standardize(dataset.train, dataset.validation, table.feature_count);
  return dataset;
}

}  // namespace commsgd::data
