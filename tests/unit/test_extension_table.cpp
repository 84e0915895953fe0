// The one registration style of the extension points (algorithms/extension_table.hpp): lookups,
// the error that lists the choices, the help lines, and the rows a table refuses. And the tables
// the trainer's options read: data sets and models (each data set's loader has tests of its own in
// test_data.cpp, test_image_folder.cpp and test_text_corpus.cpp; every model row is built in
// test_models.cpp).
#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <string>

#include "algorithms/extension_table.hpp"
#include "trainer/data/dataset.hpp"
#include "trainer/model_table.hpp"

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
  EXPECT_TRUE(data::takes_option(folder, "--image-size"));
  EXPECT_TRUE(data::takes_option(folder, "--loader-threads")) << "the last of the list";
  EXPECT_FALSE(data::takes_option(folder, "--image")) << "whole names only";
  EXPECT_FALSE(data::takes_option(data::dataset_table().find("mnist"), "--image-size"));
  EXPECT_EQ(data::datasets_taking("--csv-shape"), "csv");
  EXPECT_EQ(data::datasets_taking("--crop-fill"), "cifar10");
  EXPECT_EQ(data::datasets_taking("--no-such-option"), "");
  EXPECT_FALSE(data::dataset_table().find("synthetic").from_path);
  EXPECT_TRUE(data::dataset_table().find("ptb").text);
}

}  // namespace
}  // namespace commsgd
