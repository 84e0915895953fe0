#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "algorithms/extension_table.hpp"
#include "algorithms/own_options.hpp"

namespace commsgd::trainer {

// What a model reads and how it may be initialized, for the option checks.
enum class ModelInput { features, images, tokens };

// One row per --model value: its name, one line for --help, what it reads (a language model
// tokens), the smallest image side it takes, whether it is loaded from --model-file, and the
// options only it takes (the ResNets' initializations, ...). The option parser and the checks read
// this table; trainer/models.cpp builds a row's network (a test builds every row). No LibTorch
// here.
struct ModelRow {
  std::string_view name;
  std::string_view summary;
  ModelInput input = ModelInput::images;
  int min_side = 1;
  bool from_file = false;
  algorithms::OwnOptions own_options = {};
};

const algorithms::ExtensionTable<ModelRow>& model_table();
// Throws algorithms::UnknownName ("--model: unknown model 'x' (...)") for a name not in the table.
const ModelRow& find_model(std::string_view name);

}  // namespace commsgd::trainer
