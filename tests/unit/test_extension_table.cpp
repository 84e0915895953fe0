// The one registration style of the extension points (algorithms/extension_table.hpp): lookups,
// the error that lists the choices, the help lines, and the rows a table refuses. And the tables
// the trainer's options read: data sets and models (each data set's loader has tests of its own in
// test_data.cpp, test_image_folder.cpp and test_text_corpus.cpp; every model row is built in
// test_models.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "algorithms/catalog.hpp"
#include "algorithms/extension_table.hpp"
#include "algorithms/own_options.hpp"
#include "trainer/data/dataset.hpp"
#include "trainer/model_table.hpp"
#include "trainer/options.hpp"

namespace commsgd {
namespace {

struct Row {
  std::string_view name;
  std::string_view summary;
  int (*make)();
};

int one() {
  return 1;
}

struct PlainRow {
  std::string_view name;
  std::string_view summary;
};

TEST(ExtensionTable, FindsRowsAndNamesTheChoicesOfAnUnknownOne) {
  algorithms::ExtensionTable<Row> table("--shape", "shape",
                                        {{"circle", "round", one}, {"square", "four sides", one}});
  EXPECT_EQ(table.size(), 2u);
  EXPECT_EQ(table.find("square").summary, "four sides");
  EXPECT_EQ(table.lookup("triangle"), nullptr);
  EXPECT_EQ(table.names(), (std::vector<std::string>{"circle", "square"}));
  try {
    table.find("triangle");
    ADD_FAILURE() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "--shape: unknown shape 'triangle' (circle or square)");
  }
  EXPECT_EQ(table.help("Shape:"), "Shape:\n  circle: round\n  square: four sides");
  table.add({"triangle", "three sides", one});
  EXPECT_EQ(table.choices(), "circle, square or triangle");
  EXPECT_EQ(table[2].make(), 1);
}

TEST(ExtensionTable, RefusesATakenNameANamelessRowAndAMissingFactory) {
  algorithms::ExtensionTable<Row> table("--shape", "shape", {{"circle", "round", one}});
  EXPECT_THROW(table.add({"circle", "again", one}), std::invalid_argument);
  EXPECT_THROW(table.add({"", "nameless", one}), std::invalid_argument);
  EXPECT_THROW(table.add({"oval", "no factory", nullptr}), std::invalid_argument);
  EXPECT_EQ(table.size(), 1u);
  // A table whose rows build nothing has no factory to ask for.
  algorithms::ExtensionTable<PlainRow> plain("--colour", "colour", {{"red", "warm"}});
  plain.add({"blue", "cold"});
  EXPECT_EQ(plain.size(), 2u);
}

TEST(ExtensionTable, EveryDataSetAndModelRowIsNamedAndExplained) {
  std::set<std::string> names;
  for (const data::DatasetRow& row : data::dataset_table()) {
    EXPECT_TRUE(names.insert(std::string(row.name)).second) << row.name;
    EXPECT_FALSE(row.summary.empty()) << row.name;
  }
  for (const trainer::ModelRow& row : trainer::model_table()) {
    EXPECT_FALSE(row.summary.empty()) << row.name;
  }
  data::DatasetOptions options;
  options.kind = "imagenet";
  try {
    data::load_dataset(options);
    ADD_FAILURE() << "no error";
  } catch (const algorithms::UnknownName& e) {
    EXPECT_STREQ(e.what(),
                 "--dataset: unknown data set 'imagenet' (cifar10, mnist, csv, synthetic, "
                 "image-folder or ptb)");
  }
  try {
    trainer::find_model("vgg19");
    ADD_FAILURE() << "no error";
  } catch (const algorithms::UnknownName& e) {
    EXPECT_EQ(std::string(e.what()).rfind("--model: unknown model 'vgg19' (mlp, ", 0), 0u)
        << e.what();
  }
}

TEST(ExtensionTable, ADataSetRowSaysWhichOptionsAreItsOwn) {
  const data::DatasetRow& folder = data::dataset_table().find("image-folder");
  EXPECT_TRUE(algorithms::takes_option(folder, "--image-size"));
  EXPECT_TRUE(algorithms::takes_option(folder, "--loader-threads")) << "the last of the list";
  EXPECT_FALSE(algorithms::takes_option(folder, "--image")) << "whole names only";
  EXPECT_FALSE(algorithms::takes_option(data::dataset_table().find("mnist"), "--image-size"));
  EXPECT_EQ(algorithms::rows_taking(data::dataset_table(), "--csv-shape"), "--dataset csv");
  EXPECT_EQ(algorithms::rows_taking(data::dataset_table(), "--crop-fill"), "--dataset cifar10");
  EXPECT_EQ(algorithms::rows_taking(trainer::model_table(), "--zero-init-residual"),
            "--model resnet20, resnet32, resnet56 or resnet50");
  EXPECT_FALSE(data::dataset_table().find("synthetic").from_path);
  EXPECT_TRUE(data::dataset_table().find("ptb").text);
}

struct ScopedRow {
  std::string_view name;
  std::string_view summary;
  algorithms::OwnOptions own_options = {};
};

constexpr std::array<std::string_view, 2> kLowRank = {"--rank", "--start"};
constexpr std::array<std::string_view, 3> kBoth = {"--rank", "--start", "--levels"};
constexpr std::array<std::string_view, 1> kLevels = {"--levels"};

// Any table, one check: the options given that some rows take and this row does not, one
// problem for each set of rows that takes them, named by the flags given.
TEST(ExtensionTable, OptionsARowDoesNotTakeAreFoundByWhichRowsTakeThem) {
  const algorithms::ExtensionTable<ScopedRow> table("--method", "method",
                                                    {{"plain", "takes none"},
                                                     {"low", "low rank", kLowRank},
                                                     {"both", "both", kBoth},
                                                     {"quant", "levels", kLevels}});
  const auto given = [](std::set<std::string_view> flags) -> algorithms::OptionGiven {
    return [flags](std::string_view flag) { return flags.contains(flag); };
  };
  const auto not_taken = [&](std::string_view row, std::set<std::string_view> flags) {
    return algorithms::own_options_not_taken(table, table.find(row), given(flags));
  };

  const auto plain = not_taken("plain", {"--levels", "--rank", "--start", "--other"});
  ASSERT_EQ(plain.size(), 2u);
  EXPECT_EQ(plain[0].flags, (std::vector<std::string>{"--rank", "--start"}));
  EXPECT_EQ(plain[0].reason,
            "--rank and --start apply to --method low or both, not --method plain");
  EXPECT_EQ(plain[1].flags, (std::vector<std::string>{"--levels"}));
  EXPECT_EQ(plain[1].reason, "--levels applies to --method both or quant, not --method plain");

  const auto quant = not_taken("quant", {"--levels", "--start"});
  ASSERT_EQ(quant.size(), 1u) << "its own option is taken";
  EXPECT_EQ(quant[0].reason, "--start applies to --method low or both, not --method quant");
  EXPECT_TRUE(not_taken("both", {"--levels", "--rank", "--start"}).empty());
  EXPECT_TRUE(not_taken("plain", {"--other"}).empty()) << "no row lists it: every row takes it";
}

// A flag a row lists that commsgd-train does not declare would never be given, and the check
// would never refuse it: every listed flag is an option of commsgd-train's record.
TEST(ExtensionTable, EveryOptionARowListsIsDeclared) {
  const nlohmann::json declared = trainer::Options{};
  std::vector<std::string> unknown;
  const auto check = [&](const auto& table) {
    for (const auto& row : table) {
      for (std::string_view flag : row.own_options) {
        std::string key(flag.substr(2));
        std::ranges::replace(key, '-', '_');
        if (!flag.starts_with("--") || !declared.contains(key)) unknown.emplace_back(flag);
      }
    }
  };
  check(algorithms::algorithm_table());
  check(trainer::model_table());
  check(data::dataset_table());
  EXPECT_EQ(unknown, std::vector<std::string>{});
}

}  // namespace
}  // namespace commsgd
