#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "trainer/options.hpp"
#include "trainer/run_info.hpp"

namespace commsgd::trainer {
namespace {

namespace fs = std::filesystem;

Options parse(std::vector<std::string> args) {
  args.insert(args.begin(), "commsgd-train");
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  Options o;
  EXPECT_EQ(parse_options(static_cast<int>(argv.size()), argv.data(), o, false), ParseOutcome::run);
  return o;
}

std::string usage_error(std::vector<std::string> args) {
  try {
    parse(std::move(args));
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

fs::path write_config(const std::string& name, const std::string& text) {
  const fs::path path = fs::temp_directory_path() / name;
  std::ofstream(path) << text;
  return path;
}

TEST(Options, DefaultsAndFlags) {
  const Options d = parse({});
  EXPECT_EQ(d.algo, "dense");
  EXPECT_EQ(d.model, "mlp");
  EXPECT_EQ(d.device, "auto");  // a GPU where there is one (resolved at setup), else the CPU
  const Options o =
      parse({"--model", "lenet", "--batch-size", "64", "--nesterov", "--lr-schedule",
             "81:0.1,122:0.1", "--mlp-hidden", "256,64", "--synthetic-shape", "3,32,32"});
  EXPECT_EQ(o.model, "lenet");
  EXPECT_EQ(o.batch_size, 64);
  EXPECT_TRUE(o.nesterov);
  EXPECT_EQ(o.lr_schedule, "81:0.1,122:0.1");
  EXPECT_EQ(o.mlp_hidden, (std::vector<int>{256, 64}));
  EXPECT_EQ(o.synthetic_shape, (std::vector<int>{3, 32, 32}));
}

// --resume is read once into its kind; the recorded config keeps the text it was given.
TEST(Options, ResumeIsParsedIntoWhereTheRunContinuesFrom) {
  EXPECT_EQ(parse({}).resume.kind, ResumeFrom::Kind::nowhere);
  const Options newest = parse({"--resume", "auto", "--checkpoint-dir", "ckpt"});
  EXPECT_EQ(newest.resume.kind, ResumeFrom::Kind::newest);
  EXPECT_EQ(nlohmann::json(newest)["resume"], "auto");
  const std::filesystem::path dir = std::filesystem::temp_directory_path();
  const Options one = parse({"--resume", dir.string()});
  EXPECT_EQ(one.resume.kind, ResumeFrom::Kind::directory);
  EXPECT_EQ(one.resume.directory, dir);
  EXPECT_EQ(nlohmann::json(one)["resume"], dir.string());
}

TEST(Options, TomlConfigWithCommandLineOverride) {
  const fs::path cfg = write_config("commsgd_options_test.toml",
                                    "# a paper experiment\nmodel = \"resnet20\"\nbatch-size = 128\n"
                                    "lr = 0.2\nnesterov = true\nsynthetic-shape = [3, 16, 16]\n");
  const Options o = parse({"--config", cfg.string(), "--lr", "0.05"});
  EXPECT_EQ(o.model, "resnet20");
  EXPECT_EQ(o.batch_size, 128);
  EXPECT_DOUBLE_EQ(o.lr, 0.05);
  EXPECT_TRUE(o.nesterov);
  EXPECT_EQ(o.synthetic_shape, (std::vector<int>{3, 16, 16}));
  fs::remove(cfg);
}

TEST(Options, SparseAlgorithmsGetTheirSelectorAndAggregation) {
  EXPECT_EQ(algorithm_config(parse({"--algo", "gtopk"})).aggregation, "gtopk");
  EXPECT_EQ(algorithm_config(parse({"--algo", "gaussiank"})).selector, "gaussian");
  const auto mixed = algorithm_config(parse({"--algo", "topk", "--selector", "dgc"}));
  EXPECT_EQ(mixed.selector, "dgc");
  EXPECT_EQ(mixed.aggregation, "allgather");
  EXPECT_TRUE(algorithm_config(parse({"--algo", "dense"})).selector.empty());
}

// Converts to anything: brace-initializing an aggregate with N of them compiles while N is at
// most its number of fields.
struct AnyField {
  template <class T>
  operator T() const;
};
template <class T, std::size_t... I>
constexpr bool initializable_with(std::index_sequence<I...>) {
  return requires {
    T{(static_cast<void>(I), AnyField{})...};
  };
}
template <class T, std::size_t N = 0>
constexpr std::size_t field_count() {
  if constexpr (initializable_with<T>(std::make_index_sequence<N + 1>{})) {
    return field_count<T, N + 1>();
  } else {
    return N;
  }
}

// algorithm_config reads what each declaration says it sets: as it is, or converted. Every field
// of AlgorithmConfig is set below, away from its default, by an option: a field that no option
// feeds would keep its default silently.
TEST(Options, TheAlgorithmsConfigurationIsWhatTheOptionsDeclareIntoIt) {
  EXPECT_EQ(field_count<algorithms::AlgorithmConfig>(), 22u)
      << "AlgorithmConfig's fields changed: a new field needs a declaration .into() it "
         "(trainer/options.cpp) and a check here";
  const auto sparse = algorithm_config(parse(
      {"--algo", "gtopk", "--density", "0.01", "--density-schedule", "0:0.04", "--selector", "dgc",
       "--aggregation", "allgather", "--no-error-feedback", "--seed", "7", "--grad-stats-every",
       "3", "--norm-study-every", "5", "--barrier-before-communicate"}));
  EXPECT_EQ(sparse.algo, "gtopk");
  EXPECT_EQ(sparse.density, 0.01);
  EXPECT_EQ(sparse.density_schedule, "0:0.04");
  EXPECT_EQ(sparse.selector, "dgc");
  EXPECT_EQ(sparse.aggregation, "allgather");
  EXPECT_FALSE(sparse.error_feedback);
  EXPECT_EQ(sparse.seed, 7u);
  EXPECT_EQ(sparse.grad_stats_every, 3);
  EXPECT_EQ(sparse.norm_study_every, 5);
  EXPECT_TRUE(sparse.barrier_before_communicate);

  const auto dense = algorithm_config(parse({"--bucket-mb", "2", "--wire-dtype", "bf16"}));
  EXPECT_EQ(dense.bucket_bytes, 2u << 20);
  EXPECT_EQ(dense.wire, comm::DataType::bf16);

  const auto osgp =
      algorithm_config(parse({"--algo", "osgp", "--osgp-overlap", "one-in-flight", "--synch-freq",
                              "3", "--peers-per-iter", "2", "--topology", "exponential"}));
  EXPECT_EQ(osgp.osgp_overlap, algorithms::OsgpOverlap::one_in_flight);
  EXPECT_EQ(osgp.synch_freq, 3);
  EXPECT_EQ(osgp.peers_per_iter, 2);
  EXPECT_EQ(osgp.topology, "exponential");
  EXPECT_EQ(algorithm_config(parse({"--algo", "osgp", "--max-staleness", "4"})).max_staleness, 4);
  EXPECT_EQ(algorithm_config(parse({"--algo", "dpsgd", "--gossip-mixing", "directed"})).mixing,
            algorithms::GossipMixing::directed);

  const auto powersgd = algorithm_config(
      parse({"--algo", "powersgd", "--powersgd-rank", "4", "--powersgd-start-iter", "100"}));
  EXPECT_EQ(powersgd.powersgd_rank, 4);
  EXPECT_EQ(powersgd.powersgd_start_iter, 100);
  const auto qsgd =
      algorithm_config(parse({"--algo", "qsgd", "--qsgd-levels", "16", "--qsgd-bucket", "128"}));
  EXPECT_EQ(qsgd.qsgd_levels, 16);
  EXPECT_EQ(qsgd.qsgd_bucket, 128);
}

// A config file may hold the options of several algorithms (a paper's config runs each algorithm
// the paper compares): those --algo does not take are left out, back at their defaults, each
// noted with why, and the rest are kept. The run record keeps the notes.
TEST(Options, AConfigFileLeavesOutWhatTheAlgorithmDoesNotTake) {
  const fs::path cfg = write_config(
      "commsgd_options_several_algorithms.toml",
      "lr = 0.2\nselector = \"exact\"\ngrad-stats-every = 5\nwire-dtype = \"fp16\"\n"
      "topology = \"ring\"\ngossip-mixing = \"directed\"\nosgp-overlap = \"one-in-flight\"\n"
      "synch-freq = 2\npowersgd-rank = 2\n");
  using Keys = std::set<std::string>;
  const auto left_out = [](const Options& o) {
    Keys keys;
    for (const auto& note : o.left_out) keys.insert(note.first);
    return keys;
  };

  const Options dense = parse({"--config", cfg.string(), "--algo", "dense"});
  EXPECT_EQ(left_out(dense), (Keys{"gossip_mixing", "grad_stats_every", "osgp_overlap",
                                   "powersgd_rank", "selector", "synch_freq", "topology"}));
  EXPECT_EQ(dense.topology, "");
  EXPECT_EQ(dense.selector, "");
  EXPECT_EQ(dense.grad_stats_every, 0);
  EXPECT_EQ(dense.gossip_mixing, algorithms::GossipMixing::symmetric);
  EXPECT_EQ(dense.osgp_overlap, algorithms::OsgpOverlap::bounded_staleness);
  EXPECT_EQ(dense.synch_freq, 0);
  EXPECT_EQ(dense.wire_dtype, comm::DataType::f16);  // dense's own
  EXPECT_DOUBLE_EQ(dense.lr, 0.2);
  EXPECT_EQ(
      dense.left_out.at("topology").find("--topology applies to --algo sgp, osgp, dpsgd or adpsgd"),
      0u);
  EXPECT_NE(dense.left_out.at("topology").find("not --algo dense"), std::string::npos);

  const Options topk = parse({"--config", cfg.string(), "--algo", "topk"});
  EXPECT_EQ(left_out(topk), (Keys{"gossip_mixing", "osgp_overlap", "powersgd_rank", "synch_freq",
                                  "topology", "wire_dtype"}));
  EXPECT_EQ(topk.selector, "exact");
  EXPECT_EQ(topk.grad_stats_every, 5);
  EXPECT_EQ(topk.wire_dtype, comm::DataType::f32);

  const Options osgp = parse({"--config", cfg.string(), "--algo", "osgp"});
  EXPECT_EQ(left_out(osgp),
            (Keys{"gossip_mixing", "grad_stats_every", "powersgd_rank", "selector", "wire_dtype"}));
  EXPECT_EQ(osgp.topology, "ring");
  EXPECT_EQ(osgp.osgp_overlap, algorithms::OsgpOverlap::one_in_flight);
  EXPECT_EQ(osgp.synch_freq, 2);

  const Options dpsgd = parse({"--config", cfg.string(), "--algo", "dpsgd"});
  EXPECT_EQ(left_out(dpsgd), (Keys{"grad_stats_every", "osgp_overlap", "powersgd_rank", "selector",
                                   "synch_freq", "wire_dtype"}));

  const Options powersgd = parse({"--config", cfg.string(), "--algo", "powersgd"});
  EXPECT_EQ(left_out(powersgd), (Keys{"gossip_mixing", "grad_stats_every", "osgp_overlap",
                                      "selector", "synch_freq", "topology", "wire_dtype"}));
  EXPECT_EQ(powersgd.powersgd_rank, 2);
  EXPECT_EQ(dpsgd.gossip_mixing, algorithms::GossipMixing::directed);

  // The run's config in its record: the options as used, and what was left out of the file.
  const nlohmann::json record =
      nlohmann::json::parse(make_run_info(dense, "cpu", 1, 1, 10).config_json);
  EXPECT_EQ(record["topology"], "");
  EXPECT_EQ(record["left_out"]["topology"], dense.left_out.at("topology"));
  EXPECT_EQ(record["left_out"].size(), dense.left_out.size());
  const nlohmann::json plain =
      nlohmann::json::parse(make_run_info(parse({}), "cpu", 1, 1, 10).config_json);
  EXPECT_EQ(plain["left_out"], nlohmann::json::object());
  fs::remove(cfg);
}

// Given is what the parser counted, not a value apart from the default: an option at its default
// value is refused on the command line and left out of a file for an algorithm that does not take
// it; a flag set false is not given.
TEST(Options, AnOptionGivenAtItsDefaultIsStillGiven) {
  EXPECT_NE(usage_error({"--algo", "dense", "--powersgd-rank", "1"})
                .find("--powersgd-rank applies to --algo powersgd"),
            std::string::npos);
  EXPECT_NE(usage_error({"--algo", "sgp", "--osgp-overlap", "bounded-staleness"})
                .find("--osgp-overlap applies to --algo osgp"),
            std::string::npos);
  const fs::path cfg =
      write_config("commsgd_options_defaults.toml",
                   "qsgd-levels = 4\nbarrier-before-communicate = false\nmax-staleness = 1\n");
  const Options dense = parse({"--config", cfg.string(), "--algo", "osgp"});
  EXPECT_EQ(dense.left_out.count("qsgd_levels"), 1u);
  EXPECT_EQ(dense.left_out.count("max_staleness"), 0u);  // osgp takes it
  EXPECT_EQ(dense.left_out.count("barrier_before_communicate"), 0u);
  fs::remove(cfg);
}

// On the command line an option the algorithm does not take is refused, the file's or not: it was
// given for this run.
TEST(Options, TheCommandLineStillRefusesWhatTheAlgorithmDoesNotTake) {
  const fs::path cfg = write_config("commsgd_options_gossip.toml",
                                    "topology = \"ring\"\ngossip-mixing = \"directed\"\n");
  EXPECT_NE(usage_error({"--config", cfg.string(), "--algo", "dense", "--topology", "ring"})
                .find("--topology applies to --algo sgp, osgp, dpsgd or adpsgd"),
            std::string::npos);
  EXPECT_NE(usage_error({"--config", cfg.string(), "--algo", "sgp", "--gossip-mixing", "directed"})
                .find("--gossip-mixing applies to --algo dpsgd or adpsgd, not --algo sgp"),
            std::string::npos);
  EXPECT_NE(usage_error({"--algo", "dense", "--grad-stats-every", "3"})
                .find("--grad-stats-every applies to --algo topk, gtopk or gaussiank"),
            std::string::npos);
  // What the file leaves out is left out whatever the command line adds for the algorithm.
  const Options sgp =
      parse({"--config", cfg.string(), "--algo", "sgp", "--topology", "exponential"});
  EXPECT_EQ(sgp.topology, "exponential");
  EXPECT_EQ(sgp.left_out.count("gossip_mixing"), 1u);
  fs::remove(cfg);
}

// One line naming the file and the key, and the option meant where the key is one misspelt.
TEST(Options, UnknownConfigKeyIsAnError) {
  const fs::path cfg = write_config("commsgd_options_bad.toml", "batch-size = 8\nbatchsize = 16\n");
  EXPECT_EQ(usage_error({"--config", cfg.string()}),
            cfg.string() + ": unknown key 'batchsize'; did you mean batch-size?");
  const fs::path other = write_config("commsgd_options_other.toml", "colour = 8\n");
  EXPECT_EQ(
      usage_error({"--config", other.string()}),
      other.string() + ": unknown key 'colour' (keys are the long option names, e.g. batch-size)");
  const fs::path table = write_config("commsgd_options_table.toml", "[data]\nbatch-size = 8\n");
  EXPECT_EQ(usage_error({"--config", table.string()}),
            table.string() +
                ": unknown table [data]: options are top-level keys, e.g. "
                "batch-size = 64");
  for (const fs::path& file : {cfg, other, table}) fs::remove(file);
}

TEST(Options, BadValuesNameTheOption) {
  EXPECT_NE(usage_error({"--algo", "nope"}).find("--algo"), std::string::npos);
  EXPECT_NE(usage_error({"--batch-size", "0"}).find("--batch-size"), std::string::npos);
  EXPECT_NE(usage_error({"--lr-schedule", "81-0.1"}).find("81-0.1"), std::string::npos);
  EXPECT_NE(usage_error({"--epochs", "ten"}).find("--epochs"), std::string::npos);
  EXPECT_NE(usage_error({"--dataset", "csv"}).find("--data-path"), std::string::npos);
  EXPECT_NE(usage_error({"--csv-shape", "1,8"}).find("--csv-shape"), std::string::npos);
  EXPECT_NE(usage_error({"--config", "/nonexistent/x.toml"}).find("x.toml"), std::string::npos);
  EXPECT_NE(usage_error({"--algo", "topk", "--density", "0"}).find("--density"), std::string::npos);
  EXPECT_NE(usage_error({"--density", "1.5"}).find("--density"), std::string::npos);
  EXPECT_NE(usage_error({"--algo", "dense", "--selector", "exact"}).find("--selector"),
            std::string::npos);
  EXPECT_NE(usage_error({"--selector", "magic"}).find("--selector"), std::string::npos);
  EXPECT_NE(usage_error({"--density-schedule", "0:2"}).find("density"), std::string::npos);
  EXPECT_EQ(usage_error({"--device", "gpu"}), "--device gpu: expected auto, cpu, cuda or cuda:N");
}

// The run record's config JSON must hold every option, so a run can be repeated from its row.
TEST(Options, ConfigJsonHasEveryOption) {
  CLI::App app;
  Options o;
  add_options(app, o);
  const nlohmann::json json = o;
  for (const CLI::Option* opt : app.get_options()) {
    std::string name = opt->get_single_name();
    if (name == "help" || name == "config") continue;
    std::replace(name.begin(), name.end(), '-', '_');
    EXPECT_TRUE(json.contains(name)) << name;
  }
  EXPECT_EQ(json.size(), app.get_options().size() - 2);
}

// An option of one's own (an extension's) is one declaration: --help lists it in its group, the
// TOML file and the command line set it, the run record's JSON holds it and, hashed, it changes
// the computation hash; one declared outside the hash does not. (Its value is the process's: the
// last parse's, each parse starting from the default.)
TEST(Options, AnExtensionOptionIsOneDeclaration) {
  static const std::shared_ptr<const long> local_steps = add_extension_option(
      "--test-local-steps", 4L, "Steps a rank takes alone between two averages", "Local SGD");
  static const std::shared_ptr<const std::string> label = add_extension_option(
      "--test-label", std::string("none"), "A note for the record", "Local SGD", Hash::no);
  EXPECT_THROW(add_extension_option("--test-local-steps", 1L, "again", "Local SGD"),
               std::invalid_argument);
  parse({});
  EXPECT_EQ(*local_steps, 4) << "a parse starts from the default";

  CLI::App app;
  Options defaults;
  add_options(app, defaults);
  const std::string help = app.help();
  EXPECT_NE(help.find("Local SGD:"), std::string::npos);
  EXPECT_NE(help.find("--test-local-steps INT=4"), std::string::npos) << help;

  const Options eight = parse({"--test-local-steps", "8"});
  EXPECT_EQ(*local_steps, 8);
  EXPECT_EQ(nlohmann::json(eight)["test_local_steps"], 8);
  const std::uint64_t hash_of_eight = computation_hash(eight);

  const fs::path cfg = write_config("commsgd_extension_option.toml",
                                    "test-local-steps = 6\ntest-label = \"first\"\n");
  const Options six = parse({"--config", cfg.string()});
  EXPECT_EQ(*local_steps, 6);
  const nlohmann::json json = six;
  EXPECT_EQ(json["test_local_steps"], 6);
  EXPECT_EQ(json["test_label"], "first");
  const std::uint64_t hash_of_six = computation_hash(six);
  EXPECT_NE(hash_of_six, hash_of_eight);

  const Options relabelled = parse({"--config", cfg.string(), "--test-label", "second"});
  EXPECT_EQ(*label, "second");
  EXPECT_EQ(computation_hash(relabelled), hash_of_six) << "--test-label is outside the hash";
}

}  // namespace
}  // namespace commsgd::trainer
