#include "trainer/options.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <deque>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <regex>

#include "algorithms/algorithm.hpp"
#include "algorithms/catalog.hpp"
#include "algorithms/epoch_schedule.hpp"
#include "algorithms/gossip/topology.hpp"
#include "algorithms/sparse/aggregation.hpp"
#include "algorithms/sparse/selector.hpp"
#include "common/stable_hash.hpp"
#include "trainer/exit_codes.hpp"
#include "trainer/model_table.hpp"
#include "trainer/setup_check.hpp"

namespace commsgd::trainer {
namespace {

// --flag takes one of `choices`' names and writes the value it stands for into `target`.
template <class E, std::size_t N>
CLI::Option* add_choice(CLI::App& app, const std::string& flag, E& target,
                        const std::array<Choice<E>, N>& choices, const std::string& help) {
  std::vector<std::string> names;
  for (const Choice<E>& c : choices) names.emplace_back(c.name);
  return app
      .add_option_function<std::string>(
          flag,
          [&target, &choices](const std::string& name) {
            for (const Choice<E>& c : choices) {
              if (c.name == name) target = c.value;
            }
          },
          help)
      ->check(CLI::IsMember(names))
      ->default_str(std::string(name_of(choices, target)));
}

// "--max-steps" → "max_steps": an option's key in the run record's JSON.
std::string json_key(const std::string& flag) {
  std::string key = flag.substr(flag.find_first_not_of('-'));
  std::replace(key.begin(), key.end(), '-', '_');
  return key;
}

// An option added by a program of one's own: how it joins a CLI app (its value back at its
// default, as a fresh Options is), and its value.
struct ExtensionOption {
  std::string key;
  Hash hash;
  std::function<CLI::Option*(CLI::App&)> add;
  std::function<nlohmann::json()> value;
};

std::vector<ExtensionOption>& extension_options() {
  static std::vector<ExtensionOption> options;
  return options;
}

template <class T>
std::shared_ptr<const T> add_extension(const std::string& flag, T default_value,
                                       const std::string& help, const std::string& group,
                                       Hash hash) {
  const std::string key = json_key(flag);
  for (const ExtensionOption& option : extension_options()) {
    if (option.key == key) throw std::invalid_argument(flag + ": an extension option already");
  }
  auto value = std::make_shared<T>(default_value);
  extension_options().push_back({key, hash,
                                 [=](CLI::App& app) {
                                   *value = default_value;
                                   return app.add_option(flag, *value, help)->group(group);
                                 },
                                 [value] { return nlohmann::json(*value); }});
  return value;
}

const char* const kDescription =
    "commsgd-train: data-parallel training with one of several communication-efficient\n"
    "distributed SGD algorithms. Launch with `mpirun -np P commsgd-train ...` or\n"
    "`srun --mpi=pmix commsgd-train ...`; every rank reads the same options. Every option can\n"
    "also be set in a TOML file given with --config (keys are the long option names); flags\n"
    "on the command line override the file. Each run is recorded in SQLite (see --db).";

// Bounds checks whose message a person can read (CLI11's own print the range as ±1.8e308).
// CLI11 puts the option's name in front of the message.
CLI::Validator bound_check(double lowest, bool inclusive, const std::string& requirement) {
  return CLI::Validator(
      [=](const std::string& text) {
        double value = 0;
        if (!CLI::detail::lexical_cast(text, value)) return "'" + text + "' is not a number";
        if (!std::isfinite(value)) return "'" + text + "' is not a finite number";
        const bool ok = inclusive ? value >= lowest : value > lowest;
        return ok ? std::string() : requirement + " (got " + text + ")";
      },
      inclusive ? "NON-NEGATIVE" : "POSITIVE");
}
// A fraction of a whole: in (0, 1].
const CLI::Validator kFraction(
    [](const std::string& text) {
      double value = 0;
      if (!CLI::detail::lexical_cast(text, value)) return "'" + text + "' is not a number";
      return value > 0 && value <= 1 ? std::string() : "must be in (0, 1] (got " + text + ")";
    },
    "(0, 1]");
const CLI::Validator kPositive = bound_check(0, false, "must be > 0");
const CLI::Validator kNonNegative = bound_check(0, true, "must be >= 0");

// Ranges of floating-point values: CLI::Range lets NaN through (every comparison with it is false).
const CLI::Validator kFinite(
    [](const std::string& text) {
      double value = 0;
      return CLI::detail::lexical_cast(text, value) && std::isfinite(value)
                 ? std::string()
                 : "'" + text + "' is not a finite number";
    },
    "FINITE");

// For unsigned options: the conversion would wrap "-1" around to the largest value.
const CLI::Validator kUnsigned(
    [](const std::string& text) {
      return text.find('-') == std::string::npos ? std::string()
                                                 : "must be >= 0 (got " + text + ")";
    },
    "UNSIGNED");

const CLI::Validator kCommTimeoutCheck(
    [](const std::string& text) {
      try {
        parse_comm_timeout(text);
        return std::string();
      } catch (const std::invalid_argument& e) {
        return std::string(e.what());
      }
    },
    "auto|off|SECONDS");

// CLI11 validator for "epoch:value,..." flags: the empty string means valid.
std::string epoch_schedule_check(const std::string& text) {
  try {
    algorithms::parse_epoch_values(text);
    return std::string();
  } catch (const std::invalid_argument& e) {
    return std::string(e.what());
  }
}

// --density-schedule: a schedule whose densities are fractions of the gradient.
std::string density_schedule_check(const std::string& text) {
  if (std::string problem = epoch_schedule_check(text); !problem.empty()) return problem;
  for (const algorithms::EpochValue& e : algorithms::parse_epoch_values(text)) {
    if (e.value > 1) return "densities must be in (0, 1]";
  }
  return {};
}

}  // namespace

namespace {

// Declares options on a CLI app and collects, for each, what the run record, the hash and the
// algorithms read: its flag and JSON key (the flag, '-' → '_'), how to get its value from Options
// and to copy it from one Options to another, whether it is hashed, and where it goes in the
// algorithms' configuration (algorithm_config).
class Declarations {
 public:
  using IntoAlgorithm = std::function<void(const Options&, algorithms::AlgorithmConfig&)>;
  struct Entry {
    std::string flag;
    std::string key;
    Hash hash;
    std::function<nlohmann::json(const Options&)> value;
    std::function<void(Options& to, const Options& from)> copy;
    IntoAlgorithm into_algorithm;  // empty: the algorithms do not read it
  };

  // What a declaration hands back: the CLI option (->check(), ->group(), ...), and into(), which
  // says where the option goes in AlgorithmConfig.
  template <class T>
  class Declared {
   public:
    Declared(CLI::Option* option, Entry& entry, T Options::*member)
        : option_(option), entry_(entry), member_(member) {}
    CLI::Option* operator->() const { return option_; }
    // The option sets `field` as it is...
    Declared& into(T algorithms::AlgorithmConfig::*field) {
      entry_.into_algorithm = [member = member_, field](const Options& o,
                                                        algorithms::AlgorithmConfig& c) {
        c.*field = o.*member;
      };
      return *this;
    }
    // ... or as `set` converts it.
    Declared& into(IntoAlgorithm set) {
      entry_.into_algorithm = std::move(set);
      return *this;
    }

   private:
    CLI::Option* option_;
    Entry& entry_;
    T Options::*member_;
  };

  Declarations(CLI::App& app, Options& options) : app_(app), options_(options) {}

  template <class T>
  Declared<T> value(const std::string& flag, T Options::*member, const std::string& help,
                    Hash hash = Hash::yes) {
    Entry& entry = record(flag, hash, member,
                          [member](const Options& o) { return nlohmann::json(o.*member); });
    return {app_.add_option(flag, options_.*member, help), entry, member};
  }
  Declared<bool> flag(const std::string& flag, bool Options::*member, const std::string& help,
                      Hash hash = Hash::yes) {
    Entry& entry = record(flag, hash, member,
                          [member](const Options& o) { return nlohmann::json(o.*member); });
    return {app_.add_flag(flag, options_.*member, help), entry, member};
  }
  // One of `choices`' names, held as the value it stands for.
  template <class E, std::size_t N>
  Declared<E> choice(const std::string& flag, E Options::*member,
                     const std::array<Choice<E>, N>& choices, const std::string& help,
                     Hash hash = Hash::yes) {
    Entry& entry = record(flag, hash, member, [member, &choices](const Options& o) {
      return nlohmann::json(std::string(name_of(choices, o.*member)));
    });
    return {add_choice(app_, flag, options_.*member, choices, help), entry, member};
  }
  // Text that `parse` reads into the member, recorded as to_string writes it back.
  template <class T>
  Declared<T> parsed(const std::string& flag, T Options::*member, T (*parse)(const std::string&),
                     const std::string& help, Hash hash = Hash::yes) {
    Entry& entry = record(flag, hash, member, [member](const Options& o) {
      return nlohmann::json(to_string(o.*member));
    });
    Options& options = options_;
    return {
        app_.add_option_function<std::string>(
            flag,
            [&options, member, parse](const std::string& text) { options.*member = parse(text); },
            help),
        entry, member};
  }

  // In the order declared; a std::deque, so that an Entry stays where it is as more are added.
  const std::deque<Entry>& entries() const { return entries_; }

 private:
  template <class T>
  Entry& record(const std::string& flag, Hash hash, T Options::*member,
                std::function<nlohmann::json(const Options&)> value) {
    return entries_.emplace_back(
        Entry{flag,
              json_key(flag),
              hash,
              std::move(value),
              [member](Options& to, const Options& from) { to.*member = from.*member; },
              {}});
  }

  CLI::App& app_;
  Options& options_;
  std::deque<Entry> entries_;
};

// Options that concern every run, whatever its algorithm: what trains, for how long, and where.
void declare_run_options(Declarations& d) {
  const std::string run = "Run";
  d.value("--algo", &Options::algo,
          algorithms::algorithm_table().help("Distributed SGD algorithm:"))
      .into(&algorithms::AlgorithmConfig::algo)
      ->check(CLI::IsMember(algorithms::algorithm_table().names()))
      ->group(run);
  d.value("--epochs", &Options::epochs, "Passes over the training set")
      ->check(kPositive)
      ->group(run);
  d.value("--max-steps", &Options::max_steps,
          "Stop after this many iterations in total (0: run all --epochs)")
      ->check(kNonNegative)
      ->group(run);
  d.value("--seed", &Options::seed, "Seed for initialization, shuffling and synthetic data")
      .into(&algorithms::AlgorithmConfig::seed)
      ->check(kUnsigned)
      ->group(run);
  d.value("--threads", &Options::threads,
          "Intra-op threads per rank (0: the node's cores divided among its ranks)", Hash::no)
      ->check(kNonNegative)
      ->group(run);
  // Hashed: a GPU sums in other orders than the CPU. What the record and the hash read is the
  // device auto resolved to (with_device_resolved, setup.hpp), never auto itself.
  d.value("--device", &Options::device,
          "Where the model computes: auto (cuda where this commsgd-train was built with CUDA "
          "and LibTorch sees a GPU, else cpu; every rank must come to the same, and the run "
          "record's device column and config say which it was), cpu, cuda (each rank the GPU "
          "of its node-local rank, modulo the GPUs it sees) or cuda:N. On a GPU, the algorithm "
          "keeps the gradient, momentum and parameters there and communicates over NCCL (over "
          "MPI through host memory where ranks share a GPU); the sparse family with the "
          "original code's selectors, and a gradient or norm study, work on host copies over "
          "MPI. The run record's backend column says which. cuda and cuda:N need "
          "commsgd-train and its LibTorch built with CUDA")
      ->group(run);
  d.flag("--no-tf32", &Options::no_tf32,
         "On a GPU of the Ampere generation or later, compute convolutions in full fp32: "
         "LibTorch lets cuDNN use TF32 (a 10-bit mantissa) by default, as PyTorch does, "
         "which moves results by about 1e-3 against --device cpu. For comparisons with "
         "CPU runs; no effect on the CPU")
      ->group(run);
  d.parsed("--comm-timeout", &Options::comm_timeout, parse_comm_timeout,
           fmt::format(
               "Seconds one wait on peers may go without progress before the run fails instead of "
               "hanging: auto ({:.0f}x the slowest step after {} warm-up steps, within "
               "{:.0f}..{:.0f} s; {:.0f} s before), off, or SECONDS. It bounds every wait: a "
               "collective or message of the training step (the rank records the run failed as "
               "stalled and ends the job with exit code {}), background communication (dense's "
               "buckets, osgp's and adpsgd's gossip) and NCCL's calls (the run fails, naming the "
               "operation). Local work (data, compute, evaluation, writing) never counts; while "
               "ranks write a checkpoint a wait may last {:.0f} s",
               kStepsOfSlack, kWarmupSteps, kFloorSeconds, kCeilingSeconds, kCeilingSeconds,
               kExitStalled, kCeilingSeconds),
           Hash::no)
      ->check(kCommTimeoutCheck)
      ->default_str("auto")
      ->group(run);
}

// Dense S-SGD's own knobs, on how its one allreduce per step is scheduled and sized.
void declare_dense_options(Declarations& d) {
  using algorithms::algorithm_list, algorithms::Family;
  const std::string dense = "Dense S-SGD (" + algorithm_list(Family::dense) + ")";
  d.value("--bucket-mb", &Options::bucket_mb,
          "Allreduce the gradient in buckets of this many MiB, each as soon as backward "
          "has filled it, overlapping communication with backward (0: the whole gradient "
          "in one allreduce after backward)")
      .into([](const Options& o, algorithms::AlgorithmConfig& c) {
        c.bucket_bytes = static_cast<std::size_t>(o.bucket_mb * (1 << 20));
      })
      ->check(kNonNegative)
      ->group(dense);
  d.choice("--wire-dtype", &Options::wire_dtype, kWireDtypes,
           "Type the gradient crosses the network in: fp32, or fp16/bf16 for half the bytes "
           "(each worker's share rounded, summed in that precision)")
      .into(&algorithms::AlgorithmConfig::wire)
      ->group(dense);
}

// The sparse family's knobs, on which part of the gradient crosses the network each step.
void declare_sparse_options(Declarations& d) {
  using algorithms::algorithm_list, algorithms::Family;
  const std::string sparse = "Sparse algorithms (" + algorithm_list(Family::sparse) + ")";
  d.value("--density", &Options::density, "Fraction of gradient entries each worker sends")
      .into(&algorithms::AlgorithmConfig::density)
      ->check(kFraction)
      ->group(sparse);
  d.value("--density-schedule", &Options::density_schedule,
          "Density from EPOCH on, overriding --density: \"0:0.004,1:0.001\" (gTop-k "
          "warm-up)")
      .into(&algorithms::AlgorithmConfig::density_schedule)
      ->check(density_schedule_check)
      ->group(sparse);
  d.value("--selector", &Options::selector,
          algorithms::selector_table().help(
              "Which entries a worker proposes (default: the algorithm's):"))
      .into(&algorithms::AlgorithmConfig::selector)
      ->check(CLI::IsMember(algorithms::selector_table().names()))
      ->group(sparse);
  d.value("--aggregation", &Options::aggregation,
          algorithms::aggregation_table().help("How proposals combine (default: the algorithm's):"))
      .into(&algorithms::AlgorithmConfig::aggregation)
      ->check(CLI::IsMember(algorithms::aggregation_table().names()))
      ->group(sparse);
  d.flag("--no-error-feedback", &Options::no_error_feedback,
         "Drop what was not sent instead of carrying it to the next step (ablation)")
      .into([](const Options& o, algorithms::AlgorithmConfig& c) {
        c.error_feedback = !o.no_error_feedback;
      })
      ->group(sparse);
}

// The compressed family's knobs: PowerSGD's, as its PyTorch hook names them.
void declare_compressed_options(Declarations& d) {
  using algorithms::algorithm_list, algorithms::Family;
  const std::string compressed =
      "Compressed algorithms (" + algorithm_list(Family::compressed) + ")";
  d.value("--powersgd-rank", &Options::powersgd_rank,
          "powersgd: rank r of each compressed matrix's approximation P·Qᵀ (the hook's "
          "matrix_approximation_rank); a matrix n × m is compressed where (n + m)·r·2 < n·m, "
          "the rest is allreduced as it is")
      .into(&algorithms::AlgorithmConfig::powersgd_rank)
      ->check(kPositive)
      ->group(compressed);
  d.value("--powersgd-start-iter", &Options::powersgd_start_iter,
          "powersgd: iterations that allreduce the whole gradient before compression starts "
          "(the hook's start_powerSGD_iter, whose default is 1000; 0: compress from the first)")
      .into(&algorithms::AlgorithmConfig::powersgd_start_iter)
      ->check(kNonNegative)
      ->group(compressed);
  d.value("--qsgd-levels", &Options::qsgd_levels,
          "qsgd: levels s of |v_i|/‖v‖ each entry is stochastically rounded to (the paper's s; "
          "an entry travels in 2 + ⌊log2 s⌋ bits)")
      .into(&algorithms::AlgorithmConfig::qsgd_levels)
      ->check(kPositive)
      ->group(compressed);
  d.value("--qsgd-bucket", &Options::qsgd_bucket,
          "qsgd: entries quantized against one norm (the paper's bucket size d)")
      .into(&algorithms::AlgorithmConfig::qsgd_bucket)
      ->check(kPositive)
      ->group(compressed);
}

// The gossip family's knobs, on who averages with whom and how far exchanges may lag.
void declare_gossip_options(Declarations& d) {
  using algorithms::algorithm_list, algorithms::Family;
  const std::string gossip = "Gossip algorithms (" + algorithm_list(Family::gossip) + ")";
  std::string default_topologies;
  for (const algorithms::AlgorithmRow& row : algorithms::algorithm_table()) {
    if (row.family != Family::gossip) continue;
    default_topologies += std::string(default_topologies.empty() ? "" : ", ") +
                          std::string(row.topology) + " for " + std::string(row.name);
  }
  d.value("--topology", &Options::topology,
          algorithms::topology_table().help(
              "Who mixes with whom, varying by iteration (default: " + default_topologies + "):"))
      .into(&algorithms::AlgorithmConfig::topology)
      ->check(CLI::IsMember(algorithms::topology_table().names()))
      ->group(gossip);
  d.value("--peers-per-iter", &Options::peers_per_iter,
          "exponential: out-peers per iteration (the next offsets 2^i)")
      .into(&algorithms::AlgorithmConfig::peers_per_iter)
      ->check(kPositive)
      ->group(gossip);
  d.choice("--gossip-mixing", &Options::gossip_mixing, kGossipMixings,
           "dpsgd, adpsgd: symmetric (average with the neighbours of a symmetric topology, "
           "Lian et al.) or directed (send to the out-peers, average with what the in-peers "
           "sent: the SGP code's D-PSGD and AD-PSGD, with --topology "
           "bipartite-exponential-two-sided)")
      .into(&algorithms::AlgorithmConfig::mixing)
      ->group(gossip);
  d.choice("--osgp-overlap", &Options::osgp_overlap, kOsgpOverlaps,
           "osgp: bounded-staleness (an exchange every iteration, at most --max-staleness of "
           "them unfinished: the SGP paper's) or one-in-flight (a new exchange once the last "
           "has been absorbed, waited for after --synch-freq steps: the SGP code's)")
      .into(&algorithms::AlgorithmConfig::osgp_overlap)
      ->group(gossip);
  d.value("--max-staleness", &Options::max_staleness,
          "osgp, bounded-staleness: iterations a worker may run ahead of its gossip "
          "arrivals")
      .into(&algorithms::AlgorithmConfig::max_staleness)
      ->check(kNonNegative)
      ->group(gossip);
  d.value("--synch-freq", &Options::synch_freq,
          "osgp, one-in-flight: steps a worker takes without the exchange in flight before "
          "it waits for it (the SGP code's synch_freq; 0: every step waits)")
      .into(&algorithms::AlgorithmConfig::synch_freq)
      ->check(kNonNegative)
      ->group(gossip);
}

// Which network trains, with the construction details that match each paper's code.
void declare_model_options(Declarations& d) {
  const std::string model = "Model";
  d.value("--model", &Options::model, model_table().help("Network to train:"))
      ->check(CLI::IsMember(model_table().names()))
      ->group(model);
  d.value("--model-file", &Options::model_file,
          "torchscript: the TorchScript file (torch.jit.save) to train; it takes a batch "
          "[N, C, H, W] of the data set and returns logits [N, classes]")
      ->group(model);
  d.value("--mlp-hidden", &Options::mlp_hidden, "Hidden layer widths of the mlp, e.g. 256,128")
      ->delimiter(',')
      ->check(kPositive)
      ->group(model);
  d.value("--lstm-hidden", &Options::lstm_hidden,
          "lstm: width of the embedding and of each LSTM layer")
      ->check(kPositive)
      ->group(model);
  d.value("--lstm-layers", &Options::lstm_layers, "lstm: stacked LSTM layers")
      ->check(kPositive)
      ->group(model);
  d.value("--lstm-dropout", &Options::lstm_dropout,
          "lstm: dropout after the embedding, between layers and before the output")
      ->check(CLI::Range(0.0, 0.99) & kFinite)
      ->group(model);
  d.flag("--untie-embeddings", &Options::untie_embeddings,
         "lstm: an output layer of its own instead of the embedding matrix")
      ->group(model);
  d.flag("--zero-init-residual", &Options::zero_init_residual,
         "ResNets: start each residual block's last batch norm at zero scale, so every "
         "block starts as the identity (Goyal et al.; the SGP code's ResNet-50)")
      ->group(model);
  d.value("--fc-init-std", &Options::fc_init_std,
          "ResNets: draw the final linear layer's weights from N(0, std^2) instead of the "
          "default initialization (the SGP code's ResNet-50: 0.01; 0: the default)")
      ->check(kNonNegative)
      ->group(model);
  d.flag("--uniform-fan-out-init", &Options::uniform_fan_out_init,
         "ResNets: draw each convolution's weights from U(+-1/sqrt(k*k*out_channels)), "
         "about 2.45 times narrower than the default He normal (fan-out) for 3x3 kernels, "
         "and the final linear layer's from He normal (fan-in) with a zero bias, as "
         "GaussianK-SGD's CIFAR ResNets (models/resnet.py)")
      ->group(model);
  d.value("--bptt", &Options::bptt,
          "lstm: tokens per stream in one iteration (truncated back-propagation through "
          "time); --batch-size is the number of streams")
      ->check(kPositive)
      ->group(model);
}

// What the model learns from, and how samples are prepared before they reach it.
void declare_data_options(Declarations& d) {
  const std::string data = "Data";
  d.value("--dataset", &Options::dataset, data::dataset_table().help("Data to train on:"))
      ->check(CLI::IsMember(data::dataset_table().names()))
      ->group(data);
  d.value("--data-path", &Options::data_path,
          "Directory (cifar10, mnist; image-folder: the one holding train/ and val/; ptb: "
          "the one holding ptb.train.txt and ptb.valid.txt) or file (csv, .csv.gz)")
      ->group(data);
  d.value("--csv-shape", &Options::csv_shape, "C,H,W of each csv row's features, to feed a CNN")
      ->delimiter(',')
      ->expected(3)
      ->check(kPositive)
      ->group(data);
  d.value("--val-fraction", &Options::val_fraction, "csv: fraction of rows held out for validation")
      ->check(CLI::Range(0.0, 0.99) & kFinite)
      ->group(data);
  d.choice("--val-split", &Options::val_split, kValSplits,
           "csv: which rows are held out: interleaved (spread evenly through the file) or tail "
           "(the last rows)")
      ->group(data);
  d.value("--synthetic-shape", &Options::synthetic_shape, "C,H,W of synthetic samples")
      ->delimiter(',')
      ->expected(3)
      ->check(kPositive)
      ->group(data);
  d.value("--synthetic-classes", &Options::synthetic_classes, "Classes of the synthetic set")
      ->check(CLI::Range(2, 100000))
      ->group(data);
  d.value("--synthetic-train", &Options::synthetic_train, "Synthetic training samples")
      ->check(kPositive)
      ->group(data);
  d.value("--synthetic-val", &Options::synthetic_val, "Synthetic validation samples")
      ->check(kPositive)
      ->group(data);
  d.flag("--no-normalize", &Options::no_normalize,
         "Feed raw pixel/feature values (default: standardize)")
      ->group(data);
  d.choice("--augment", &Options::augment, kAugments,
           "Random crop (pad 4) and horizontal flip of training images (image-folder: "
           "random-resized crop and flip; off: the validation resize and centre crop); auto: on "
           "for cifar10 and image-folder")
      ->group(data);
  d.choice("--crop-fill", &Options::crop_fill, kCropFills,
           "What the random crop's 4-pixel border holds: zero, 0 in the normalized units, "
           "i.e. the mean colour; black, a black pixel as normalized, about -2 per channel, "
           "which is what torchvision's RandomCrop before Normalize gives (cifar10 only)")
      ->group(data);
  d.value("--image-size", &Options::image_size,
          "image-folder: side of the square images fed to the model (0: 224)")
      ->check(kNonNegative)
      ->group(data);
  d.value("--image-squash", &Options::image_squash,
          "image-folder: first resize every image to NxN whatever its aspect ratio "
          "(bicubic, as OpenCV), then crop as usual: how the gTop-k and Gaussian-k code "
          "stored ImageNet (N = 224); 0: off")
      ->check(kNonNegative)
      ->group(data);
  d.choice("--resized-crop", &Options::resized_crop, kResizedCrops,
           "image-folder: the training crop as which torchvision's RandomResizedCrop draws it. "
           "torchvision (0.3 and later): the aspect ratio log-uniform in [3/4, 4/3], else the "
           "largest central crop within it; torchvision-0.2 (PyTorch 0.4's, which the gTop-k, "
           "Gaussian-k and SGP codes ran): the ratio uniform, width and height swapped half the "
           "time, else the central square")
      ->group(data);
  d.value("--val-crop-fraction", &Options::val_crop_fraction,
          "image-folder: validation resizes the shorter side to S / F and keeps the central "
          "SxS (0.875: torchvision's Resize(256) + CenterCrop(224); 1: the whole shorter "
          "side)")
      ->check(CLI::Range(0.0, 1.0) & kPositive)
      ->group(data);
  d.value("--loader-threads", &Options::loader_threads,
          "image-folder: image decoding threads per rank (0: the node's cores divided "
          "among its ranks; with --check-data, all of them)",
          Hash::no)
      ->check(kNonNegative)
      ->group(data);
}

// How the parameters follow the gradient, and how an epoch's progress is validated.
void declare_optimization_options(Declarations& d) {
  const std::string opt = "Optimization";
  d.value("--batch-size", &Options::batch_size, "Samples per iteration on each worker")
      ->check(kPositive)
      ->group(opt);
  d.value("--lr", &Options::lr, "Base learning rate")->check(kPositive)->group(opt);
  d.value("--momentum", &Options::momentum, "SGD momentum")
      ->check(CLI::Range(0.0, 0.999) & kFinite)
      ->group(opt);
  d.flag("--nesterov", &Options::nesterov, "Nesterov momentum")->group(opt);
  d.value("--weight-decay", &Options::weight_decay, "L2 penalty")->check(kNonNegative)->group(opt);
  d.flag("--no-decay-bn-bias", &Options::no_decay_bn_bias,
         "No weight decay on one-dimensional parameters: batch-norm scales and shifts, and "
         "biases (the GaussianK-SGD code's parameter groups)")
      ->group(opt);
  d.value("--lr-schedule", &Options::lr_schedule,
          "Multiply the lr by FACTOR from EPOCH on: \"81:0.1,122:0.1\"")
      ->check(epoch_schedule_check)
      ->group(opt);
  d.value("--warmup-epochs", &Options::warmup_epochs, "Linear lr warm-up over these epochs")
      ->check(kNonNegative)
      ->group(opt);
  d.choice("--warmup-start", &Options::warmup_start, kWarmupStarts,
           "Where the warm-up starts: zero (the lr times (t+1)/T at iteration t of T, Goyal "
           "et al.) or lr-over-workers (from lr/P up to lr: the gTop-k and SGP codes' "
           "warm-up; with --scale-lr that is from the unscaled lr)")
      ->group(opt);
  d.value("--lr-update-every", &Options::lr_update_every,
          "Recompute the lr only every N iterations of an epoch and hold it in between "
          "(the SGP code's N = 100; 1: every iteration)")
      ->check(kPositive)
      ->group(opt);
  d.flag("--scale-lr", &Options::scale_lr, "Multiply the lr by the number of workers")->group(opt);
  d.value("--clip-grad-norm", &Options::clip_grad_norm,
          "Clip the synchronized gradient to this global L2 norm (0: off)")
      ->check(kNonNegative)
      ->group(opt);
  d.choice("--on-nonfinite", &Options::on_nonfinite, kOnNonfinites,
           "NaN/Inf in a loss or the synchronized gradient: stop (the run fails) or skip-step "
           "(drop that batch's gradient, or the whole update, and go on)")
      ->group(opt);
  d.value("--eval-batch-size", &Options::eval_batch_size, "Samples per validation batch")
      ->check(kPositive)
      ->group(opt);
  d.flag("--eval-reset-state", &Options::eval_reset_state,
         "lstm: validate each batch of streams from a zero recurrent state (default: the "
         "state carries through the validation text); --eval-windows scores as the gTop-k and "
         "GaussianK-SGD codes do")
      ->group(opt);
  d.flag("--eval-windows", &Options::eval_windows,
         "lstm: score the validation text as the gTop-k and GaussianK-SGD codes do: windows of "
         "--bptt tokens on a grid from its first token, in batches of --eval-batch-size windows "
         "(the last partial window and batch dropped), each window from a zero state; the "
         "ranks share the batches, so what is scored does not depend on P (default: each "
         "rank's 1/P of the text as --eval-batch-size streams)")
      ->group(opt);
  d.choice("--eval-model", &Options::eval_model, kEvalModels,
           "Classifiers: what an epoch's validation scores. consensus: the mean of the "
           "ranks' parameters (for gossip; the one model of the synchronous algorithms), "
           "with rank 0's batch-norm statistics, the validation set shared out over the "
           "ranks. local: every rank scores its own parameters and batch-norm statistics "
           "on the whole validation set, and the scores are averaged over ranks, as the "
           "SGP code reports its gossip runs (P times the evaluation work)")
      ->group(opt);
}

// What a run leaves behind for analysis, and the knobs that exist only for measurements.
void declare_recording_options(Declarations& d) {
  const std::string rec = "Recording";
  d.value("--db", &Options::db,
          "SQLite file for the run record, which several runs may share (on a network "
          "file system one at a time)",
          Hash::no)
      ->group(rec);
  d.value("--db-dir", &Options::db_dir, "Without --db: write DIR/<run id>.sqlite", Hash::no)
      ->group(rec);
  d.value("--log-every", &Options::log_every, "Record step timings every N iterations")
      ->check(kPositive)
      ->group(rec);
  d.value("--grad-stats-every", &Options::grad_stats_every,
          "Sparse algorithms: every N iterations, record how much of rank 0's accumulated "
          "gradient the selection leaves out, beside the bounds 1-k/d and (1-k/d)^2, and "
          "its histogram (table grad_stats; 0: never)")
      .into(&algorithms::AlgorithmConfig::grad_stats_every)
      ->check(kNonNegative)
      ->group(rec);
  d.value("--norm-study-every", &Options::norm_study_every,
          "Sparse algorithms, ef-signsgd, qsgd and powersgd: every N iterations, the gTop-k "
          "paper's norm study (its code's PROFILING_NORM): also allreduce the dense x = mean of "
          "the ranks' g+e, and record ||x - u|| for the update u applied, ||x - randk(x)|| with "
          "k entries kept at random, and the bound (1-k/d)||x|| (table norm_study; 0: never). "
          "k is the entries a rank selected (sparse), or as many 8-byte index-value pairs as "
          "the bytes a rank puts into the exchange (compressed: equal-bytes random-k). The "
          "extra allreduce is not counted in the step's time or bytes")
      .into(&algorithms::AlgorithmConfig::norm_study_every)
      ->check(kNonNegative)
      ->group(rec);
  d.flag("--barrier-before-communicate", &Options::barrier_before_communicate,
         "Sparse and compressed algorithms, dense with --bucket-mb 0, sgp and dpsgd: wait at "
         "a barrier for every rank before the exchange (sgp, dpsgd: before the mixing round) "
         "and record that as wait_s, so that communicate_s is the exchange alone, not the wait "
         "for the slowest rank (for measurements on oversubscribed hosts, and for the cost "
         "model's check; costs one barrier per iteration)",
         Hash::no)
      .into(&algorithms::AlgorithmConfig::barrier_before_communicate)
      ->group(rec);
  d.value("--network", &Options::network,
          "Label of the network, recorded with the run (the job templates' network "
          "profiles and jobs/local/launch.sh set COMMSGD_NETWORK)",
          Hash::no)
      ->envname("COMMSGD_NETWORK")
      ->group(rec);
  d.value("--emulate-link-mbps", &Options::emulate_link_mbps,
          "Slow every transfer to this link bandwidth in Mbit/s, emulating a network on one "
          "machine (0: off). With --device cuda, GPU buffers then go through host memory over "
          "MPI (backend mpi-staged), never NCCL, which the emulation could not slow")
      ->check(kNonNegative)
      ->group(rec);
  d.value("--dump-params", &Options::dump_params,
          "Write the final flat float32 parameters to this file (rank 0)", Hash::no)
      ->group(rec);
  d.flag("--quiet", &Options::quiet, "No progress output", Hash::no)->group(rec);
}

// Checkpoints, so that a run stopped or preempted can go on where it was.
void declare_checkpoint_options(Declarations& d) {
  const std::string ckpt = "Checkpoints";
  d.value("--checkpoint-dir", &Options::checkpoint_dir,
          "Write checkpoints here (the two newest are kept). With it, SIGTERM, SIGINT and "
          "SIGUSR1 stop the run at its next logged step with a checkpoint, and the run is "
          "recorded `preempted`",
          Hash::no)
      ->group(ckpt);
  d.value("--checkpoint-every", &Options::checkpoint_every, "Also checkpoint every N epochs",
          Hash::no)
      ->check(kNonNegative)
      ->group(ckpt);
  d.value("--checkpoint-every-steps", &Options::checkpoint_every_steps,
          "Also checkpoint every N iterations (at the next logged step)", Hash::no)
      ->check(kNonNegative)
      ->group(ckpt);
  d.parsed("--resume", &Options::resume, parse_resume,
           "auto: continue from the newest usable checkpoint in --checkpoint-dir (start "
           "afresh if there is none); or a checkpoint's directory. The run keeps its "
           "run row and database",
           Hash::no)
      ->group(ckpt);
}

// Every option of commsgd-train, each declared once: its flag, member, help, group and checks in
// its group's function above; its TOML key, its key in the run record's JSON and whether it
// enters the computation hash follow from the declaration (Declarations). The calls' order is
// the declarations' order, which --help lists them in (docs/usage.md holds it verbatim).
void declare_options(Declarations& d) {
  declare_run_options(d);
  declare_dense_options(d);
  declare_sparse_options(d);
  declare_compressed_options(d);
  declare_gossip_options(d);
  declare_model_options(d);
  declare_data_options(d);
  declare_optimization_options(d);
  declare_recording_options(d);
  declare_checkpoint_options(d);
}

// The --config file, read as CLI11 reads TOML, except that a key naming no option is one clear
// line: CLI11's own "INI was not able to parse KEY" names neither the file nor what is wrong, and
// shows a [table] as "TABLE.++".
class ConfigFile : public CLI::ConfigTOML {
 public:
  explicit ConfigFile(const CLI::App& app) : app_(app) {}

  std::vector<CLI::ConfigItem> from_config(std::istream& input) const override {
    std::vector<CLI::ConfigItem> items = CLI::ConfigTOML::from_config(input);
    for (const CLI::ConfigItem& item : items) {
      // A [table] or a dotted key: CLI11 would look for a subcommand, and commsgd-train has none.
      if (!item.parents.empty()) {
        throw UsageError(
            fmt::format("{}: unknown table [{}]: options are top-level keys, e.g. batch-size = 64",
                        file(), fmt::join(item.parents, ".")));
      }
      if (app_.get_option_no_throw("--" + item.name) == nullptr) {
        throw UsageError(
            fmt::format("{}: unknown key '{}'{}", file(), item.name, suggestion(item.name)));
      }
    }
    return items;
  }

 private:
  // Only --config reads a file, and only one --config is accepted: this is the file being read.
  std::string file() const { return app_.get_config_ptr()->as<std::string>(); }

  // The option a key was probably meant to be, spelt without its hyphens ("batchsize",
  // "batch_size"), or a reminder of what keys are.
  std::string suggestion(const std::string& key) const {
    const auto squashed = [](std::string name) {
      std::erase_if(name, [](char c) { return c == '-' || c == '_'; });
      return name;
    };
    for (const CLI::Option* option : app_.get_options()) {
      for (const std::string& long_name : option->get_lnames()) {
        if (squashed(long_name) == squashed(key)) {
          return fmt::format("; did you mean {}?", long_name);
        }
      }
    }
    return " (keys are the long option names, e.g. batch-size)";
  }

  const CLI::App& app_;
};

}  // namespace

void add_options(CLI::App& app, Options& o) {
  app.description(kDescription);
  app.set_config("--config", "",
                 "TOML file of options; command-line flags override it. It may hold the options "
                 "of several algorithms: those --algo does not take are left out, with a note "
                 "(stderr, and left_out in the run's config)");
  app.config_formatter(std::make_shared<ConfigFile>(app));
  app.allow_config_extras(CLI::config_extras_mode::error);
  app.option_defaults()->always_capture_default();
  Declarations d(app, o);
  declare_options(d);
  for (const ExtensionOption& extension : extension_options()) extension.add(app);
}

ResumeFrom parse_resume(const std::string& text) {
  if (text.empty()) return {};
  if (text == "auto") return {ResumeFrom::Kind::newest, {}};
  return {ResumeFrom::Kind::directory, text};
}

std::string to_string(const ResumeFrom& resume) {
  switch (resume.kind) {
    case ResumeFrom::Kind::nowhere:
      return "";
    case ResumeFrom::Kind::newest:
      return "auto";
    case ResumeFrom::Kind::directory:
      return resume.directory.string();
  }
  return "";
}

namespace {

// What each declaration says beyond the command line (declared on a scratch app: the entries
// read any Options they are given, not the one they were declared with).
const std::deque<Declarations::Entry>& declared_entries() {
  static const std::deque<Declarations::Entry> entries = [] {
    CLI::App scratch;
    Options declared;
    Declarations d(scratch, declared);
    declare_options(d);
    return d.entries();
  }();
  return entries;
}

// The declaration of `flag`, or null.
const Declarations::Entry* declared_entry(std::string_view flag) {
  for (const Declarations::Entry& entry : declared_entries()) {
    if (entry.flag == flag) return &entry;
  }
  return nullptr;
}

// The algorithms' configuration as the options set it, before the algorithm's defaults are filled
// in.
algorithms::AlgorithmConfig unresolved_config(const Options& o) {
  algorithms::AlgorithmConfig c;
  for (const Declarations::Entry& entry : declared_entries()) {
    if (entry.into_algorithm) entry.into_algorithm(o, c);
  }
  return c;
}

// Given: the options CLI11 counted, on the command line or in the config file, at the values
// `options` holds; a flag given false asks for nothing.
algorithms::OptionGiven counted_by(const CLI::App& app, const Options& options) {
  return [&app, &options](std::string_view flag) {
    const CLI::Option* option = app.get_option_no_throw(std::string(flag));
    if (option == nullptr || option->count() == 0) return false;
    const Declarations::Entry* entry = declared_entry(flag);
    if (entry == nullptr) return true;
    const nlohmann::json value = entry->value(options);
    return !value.is_boolean() || value.get<bool>();
  };
}

// A config file may hold the options of several algorithms, so that a paper's config runs every
// algorithm the paper compares (--config sgp/imagenet-resnet50.toml --algo dense). An option the
// file sets that --algo does not take is left out, put back as it was before the parse, and noted
// in options.left_out with why. On the command line the same option is refused: it was given for
// this run. Given is what CLI11 counted, so an option given at its default value counts too.
void leave_out_options_not_taken(const CLI::App& app, const Options& before, Options& options) {
  options.left_out.clear();
  // --algo's check has let only the table's algorithms through, so this does not throw.
  const std::vector<algorithms::OptionNotTaken> not_taken =
      algorithms::options_not_taken(unresolved_config(options), counted_by(app, options));
  // CLI11 lists what the command line gave in parse_order(); an option the config file set has
  // results but is not listed there. (Nor is one an environment variable set, --network's, which
  // every algorithm takes.)
  const std::vector<CLI::Option*>& typed = app.parse_order();
  const auto on_command_line = [&](const std::string& flag) {
    return std::find(typed.begin(), typed.end(), app.get_option_no_throw(flag)) != typed.end();
  };
  for (const algorithms::OptionNotTaken& problem : not_taken) {
    if (std::any_of(problem.flags.begin(), problem.flags.end(), on_command_line)) {
      throw UsageError(problem.reason);
    }
    for (const Declarations::Entry& entry : declared_entries()) {
      if (std::find(problem.flags.begin(), problem.flags.end(), entry.flag) ==
          problem.flags.end()) {
        continue;
      }
      entry.copy(options, before);
      options.left_out[entry.key] = problem.reason;
    }
  }
}

// The options as the run record keeps them: all of them, or those the computation hash reads.
nlohmann::json recorded(const Options& o, bool hashed_only) {
  nlohmann::json json = nlohmann::json::object();
  for (const Declarations::Entry& entry : declared_entries()) {
    if (!hashed_only || entry.hash == Hash::yes) json[entry.key] = entry.value(o);
  }
  for (const ExtensionOption& extension : extension_options()) {
    if (!hashed_only || extension.hash == Hash::yes) json[extension.key] = extension.value();
  }
  return json;
}

}  // namespace

void to_json(nlohmann::json& json, const Options& o) {
  json = recorded(o, false);
}

std::shared_ptr<const long> add_extension_option(const std::string& flag, long default_value,
                                                 const std::string& help, const std::string& group,
                                                 Hash hash) {
  return add_extension(flag, default_value, help, group, hash);
}

std::shared_ptr<const double> add_extension_option(const std::string& flag, double default_value,
                                                   const std::string& help,
                                                   const std::string& group, Hash hash) {
  return add_extension(flag, default_value, help, group, hash);
}

std::shared_ptr<const std::string> add_extension_option(const std::string& flag,
                                                        std::string default_value,
                                                        const std::string& help,
                                                        const std::string& group, Hash hash) {
  return add_extension(flag, std::move(default_value), help, group, hash);
}

ParseOutcome parse_options(int argc, const char* const* argv, Options& options, bool print) {
  const Options before = options;
  CLI::App app;
  app.name("commsgd-train");
  add_options(app, options);
  bool version = false, check_build = false, check_data = false;
  app.add_flag("--version", version,
               "Print what this build is made of, a line each: the commit, LibTorch and whether "
               "it has CUDA, the CUDA kernels, NCCL, the MPI library and whether it is CUDA-aware, "
               "the SIMD path each kernel takes on this CPU; then exit");
  app.add_flag("--check-build", check_build,
               "The same, and what this node gives it at run time (the GPUs LibTorch sees); then "
               "exit. Run it as the job would (srun or mpirun on a compute node) before a "
               "multi-node job");
  app.add_flag("--check-data", check_data,
               "Read the data set the other options name, every training and validation file, "
               "and exit: 0 if all are good, 2 if any is bad, each bad file printed with its "
               "reason and a count per class. An image folder's images are decoded on "
               "--loader-threads threads (0: all the node's cores); the other data sets are "
               "loaded as a run loads them. One process, no MPI launch needed: run it before a "
               "long job");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    if (print) std::cout << app.help();
    return ParseOutcome::exit_ok;
  } catch (const CLI::ParseError& e) {
    throw UsageError(e.what());
  }
  if (check_build) return ParseOutcome::check_build;
  if (version) return ParseOutcome::version;
  leave_out_options_not_taken(app, before, options);
  validate(options, counted_by(app, options));
  return check_data ? ParseOutcome::check_data : ParseOutcome::run;
}

data::DatasetOptions dataset_options(const Options& o) {
  data::DatasetOptions d;
  d.kind = o.dataset;
  d.path = o.data_path;
  if (!o.csv_shape.empty())
    d.csv_shape = data::SampleShape{o.csv_shape[0], o.csv_shape[1], o.csv_shape[2]};
  d.val_fraction = o.val_fraction;
  d.val_split = o.val_split;
  d.synthetic_shape = {o.synthetic_shape[0], o.synthetic_shape[1], o.synthetic_shape[2]};
  d.synthetic_classes = o.synthetic_classes;
  d.synthetic_train = static_cast<std::size_t>(o.synthetic_train);
  d.synthetic_val = static_cast<std::size_t>(o.synthetic_val);
  d.seed = o.seed;
  d.normalize = !o.no_normalize;
  d.image_size = o.image_size > 0 ? o.image_size : 224;
  return d;
}

algorithms::AlgorithmConfig algorithm_config(const Options& o) {
  try {
    return algorithms::resolve(unresolved_config(o));
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
}

namespace {

// The row `name` names; an unknown name is bad input.
template <class Row>
const Row& named_row(const algorithms::ExtensionTable<Row>& table, std::string_view name) {
  try {
    return table.find(name);
  } catch (const algorithms::UnknownName& e) {
    throw UsageError(e.what());
  }
}

// The first option given for `row` that it does not take is bad input.
template <class Row>
void refuse_options_not_taken(const algorithms::ExtensionTable<Row>& table, const Row& row,
                              const algorithms::OptionGiven& given) {
  const std::vector<algorithms::OptionNotTaken> not_taken =
      algorithms::own_options_not_taken(table, row, given);
  if (!not_taken.empty()) throw UsageError(not_taken.front().reason);
}

}  // namespace

double warmup_start_fraction(const Options& o, int workers) {
  return o.warmup_start == WarmupStart::lr_over_workers ? 1.0 / workers : 0.0;
}

namespace {

// Given when its recorded value differs from the default's: for options built in code.
algorithms::OptionGiven set_apart_from_default(const Options& o) {
  return [&o](std::string_view flag) {
    static const Options defaults;
    const Declarations::Entry* entry = declared_entry(flag);
    if (entry == nullptr) {
      throw std::logic_error("set_apart_from_default: no option " + std::string(flag));
    }
    return entry->value(o) != entry->value(defaults);
  };
}

}  // namespace

void validate(const Options& o) {
  validate(o, set_apart_from_default(o));
}

void validate(const Options& o, const algorithms::OptionGiven& given) {
  algorithm_config(o);  // refuses what the algorithm does not take, and what does not go together
  if (!std::regex_match(o.device, std::regex("auto|cpu|cuda(:[0-9]{1,4})?"))) {
    throw UsageError("--device " + o.device + ": expected auto, cpu, cuda or cuda:N");
  }
  if (o.bucket_mb > 0 && o.bucket_mb * (1 << 20) < sizeof(float)) {
    throw UsageError("--bucket-mb must be 0 or hold at least one float (4 bytes)");
  }
  const data::DatasetRow& dataset = named_row(data::dataset_table(), o.dataset);
  if (dataset.from_path && o.data_path.empty()) {
    throw UsageError("--data-path is required with --dataset " + o.dataset);
  }
  refuse_options_not_taken(data::dataset_table(), dataset, given);
  const ModelRow& model = named_row(model_table(), o.model);
  refuse_options_not_taken(model_table(), model, given);
  const bool language_model = model.input == ModelInput::tokens;
  if (o.eval_windows && o.eval_reset_state) {
    throw UsageError(
        "--eval-windows starts every window from a zero state already: drop "
        "--eval-reset-state");
  }
  if (o.eval_model == EvalModel::local && language_model) {
    throw UsageError("--eval-model local applies to the classifiers, not --model " + o.model);
  }
  if (model.from_file && o.model_file.empty()) {
    throw UsageError("--model " + o.model + " needs --model-file PATH (a TorchScript file)");
  }
  if (language_model != dataset.text) {
    throw UsageError("--model lstm and --dataset ptb go together (a language model, and text)");
  }
  if (o.checkpoint_dir.empty()) {
    if (o.checkpoint_every > 0) throw UsageError("--checkpoint-every needs --checkpoint-dir");
    if (o.checkpoint_every_steps > 0) {
      throw UsageError("--checkpoint-every-steps needs --checkpoint-dir");
    }
    if (o.resume.kind == ResumeFrom::Kind::newest) {
      throw UsageError("--resume auto needs --checkpoint-dir");
    }
  }
  if (o.resume.kind == ResumeFrom::Kind::directory &&
      !std::filesystem::is_directory(o.resume.directory)) {
    throw UsageError("--resume: " + o.resume.directory.string() + " is not a checkpoint directory");
  }
  if (!o.dump_params.empty()) {
    const std::filesystem::path parent = std::filesystem::path(o.dump_params).parent_path();
    if (!parent.empty() && !std::filesystem::is_directory(parent)) {
      throw UsageError("--dump-params: directory " + parent.string() + " does not exist");
    }
  }
}

std::uint64_t computation_hash(const Options& o) {
  return stable_hash(recorded(o, true).dump());
}

std::vector<std::string> keys_outside_configuration(const Options& o) {
  const nlohmann::json hashed = recorded(o, true), all = recorded(o, false);
  std::vector<std::string> keys;
  for (const auto& [key, value] : all.items()) {
    if (!hashed.contains(key)) keys.push_back(key);
  }
  keys.push_back("seed");
  return keys;
}

}  // namespace commsgd::trainer
