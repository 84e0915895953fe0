#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "algorithms/algorithm.hpp"
#include "algorithms/catalog.hpp"
#include "trainer/choices.hpp"
#include "trainer/comm_timeout.hpp"
#include "trainer/data/dataset.hpp"
#include "trainer/data/image_transforms.hpp"

namespace CLI {
class App;
}

namespace commsgd::trainer {

// --val-split (csv): which rows are held out.
inline constexpr std::array<Choice<data::ValSplit>, 2> kValSplits = {
    {{"interleaved", data::ValSplit::interleaved}, {"tail", data::ValSplit::tail}}};

// --augment: auto is on for cifar10 and image-folder, off otherwise.
enum class Augment { automatic, on, off };
inline constexpr std::array<Choice<Augment>, 3> kAugments = {
    {{"auto", Augment::automatic}, {"on", Augment::on}, {"off", Augment::off}}};

// --crop-fill: what the random crop's padding holds, 0 in the stored units or a black pixel.
inline constexpr std::array<Choice<data::ResizedCrop>, 2> kResizedCrops = {
    {{"torchvision", data::ResizedCrop::torchvision},
     {"torchvision-0.2", data::ResizedCrop::torchvision_0_2}}};
enum class CropFill { zero, black };
inline constexpr std::array<Choice<CropFill>, 2> kCropFills = {
    {{"zero", CropFill::zero}, {"black", CropFill::black}}};

// --warmup-start: where a warm-up starts, 0 or lr/P.
enum class WarmupStart { zero, lr_over_workers };
inline constexpr std::array<Choice<WarmupStart>, 2> kWarmupStarts = {
    {{"zero", WarmupStart::zero}, {"lr-over-workers", WarmupStart::lr_over_workers}}};

// --on-nonfinite: what a NaN or Inf in a loss or an update does.
enum class OnNonfinite { stop, skip_step };
inline constexpr std::array<Choice<OnNonfinite>, 2> kOnNonfinites = {
    {{"stop", OnNonfinite::stop}, {"skip-step", OnNonfinite::skip_step}}};

// --eval-model: the consensus of the ranks' parameters, or each rank's own.
enum class EvalModel { consensus, local };
inline constexpr std::array<Choice<EvalModel>, 2> kEvalModels = {
    {{"consensus", EvalModel::consensus}, {"local", EvalModel::local}}};

// --wire-dtype: the type dense's gradient crosses the network in.
inline constexpr std::array<Choice<comm::DataType>, 3> kWireDtypes = {
    {{"fp32", comm::DataType::f32}, {"fp16", comm::DataType::f16}, {"bf16", comm::DataType::bf16}}};

// --gossip-mixing: dpsgd's and adpsgd's averaging, with the neighbours or with the in-peers.
inline constexpr std::array<Choice<algorithms::GossipMixing>, 2> kGossipMixings = {
    {{"symmetric", algorithms::GossipMixing::symmetric},
     {"directed", algorithms::GossipMixing::directed}}};

// --osgp-overlap: the SGP paper's bounded staleness, or the SGP code's one exchange in flight.
inline constexpr std::array<Choice<algorithms::OsgpOverlap>, 2> kOsgpOverlaps = {
    {{"bounded-staleness", algorithms::OsgpOverlap::bounded_staleness},
     {"one-in-flight", algorithms::OsgpOverlap::one_in_flight}}};

// Bad input from the person at the keyboard (a flag, a config file, a path): reported as one line,
// exit code 2, before any rank starts training.
class UsageError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

// --resume: where a run continues from. Nowhere (a run from the start), the newest usable
// checkpoint under --checkpoint-dir ("auto"), or one checkpoint's directory.
struct ResumeFrom {
  enum class Kind { nowhere, newest, directory };
  Kind kind = Kind::nowhere;
  std::filesystem::path directory;  // Kind::directory's
};
ResumeFrom parse_resume(const std::string& text);  // "", "auto" or a directory
std::string to_string(const ResumeFrom& resume);   // what parse_resume reads back

// Every option of commsgd-train, its type and default; options.cpp declares each once (flag, help,
// checks, whether it is hashed). Field names are the long flags with '-' → '_'; left_out, the one
// field that is no option, says what parse_options left out of the --config file.
struct Options {
  // Run
  std::string algo = "dense";
  int epochs = 10;
  long max_steps = 0;  // 0: no limit besides --epochs
  std::uint64_t seed = 1;
  int threads = 0;  // 0: the node's cores shared among its ranks
  // auto (cuda where the build and the node allow it, else cpu; resolved before the run is set
  // up, setup.hpp), cpu, cuda (each rank its node-local GPU) or cuda:N
  std::string device = "auto";
  // On a GPU, convolutions in full fp32 rather than cuDNN's TF32 (LibTorch's default on Ampere
  // and later).
  bool no_tf32 = false;
  // Dense S-SGD
  double bucket_mb = 25;
  comm::DataType wire_dtype = comm::DataType::f32;
  // Sparse algorithms
  double density = 0.001;
  std::string density_schedule;
  std::string selector;
  std::string aggregation;
  bool no_error_feedback = false;
  // Compressed algorithms
  int powersgd_rank = 1;
  long powersgd_start_iter = 0;
  int qsgd_levels = 4;
  int qsgd_bucket = 512;
  // Gossip algorithms
  std::string topology;
  int peers_per_iter = 1;
  algorithms::GossipMixing gossip_mixing = algorithms::GossipMixing::symmetric;
  int max_staleness = 1;
  algorithms::OsgpOverlap osgp_overlap = algorithms::OsgpOverlap::bounded_staleness;
  int synch_freq = 0;
  CommTimeout comm_timeout;
  // Model
  std::string model = "mlp";
  std::string model_file;  // --model torchscript
  std::vector<int> mlp_hidden = {128};
  int lstm_hidden = 1500;
  int lstm_layers = 2;
  double lstm_dropout = 0.65;
  bool untie_embeddings = false;
  bool zero_init_residual = false;
  double fc_init_std = 0;  // 0: the model's own initialization of its last linear layer
  // ResNets: GaussianK-SGD's initialization (conv uniform over fan-out)
  bool uniform_fan_out_init = false;
  int bptt = 35;  // language models: tokens per stream per iteration
  // Data
  std::string dataset = "synthetic";
  std::string data_path;
  std::vector<int> csv_shape;
  double val_fraction = 0.2;
  data::ValSplit val_split = data::ValSplit::interleaved;
  std::vector<int> synthetic_shape = {1, 8, 8};
  int synthetic_classes = 10;
  long synthetic_train = 2048;
  long synthetic_val = 512;
  bool no_normalize = false;
  Augment augment = Augment::automatic;
  CropFill crop_fill = CropFill::zero;
  int image_size = 0;    // image-folder: 0 means 224
  int image_squash = 0;  // image-folder: > 0 squashes every image to this square first
  data::ResizedCrop resized_crop = data::ResizedCrop::torchvision;  // image-folder: train's crop
  double val_crop_fraction = 0.875;  // image-folder: validation centre crop / resized side
  int loader_threads = 0;  // image-folder: 0 means the node's cores divided among its ranks
  // Optimization
  int batch_size = 32;
  double lr = 0.1;
  double momentum = 0.9;
  bool nesterov = false;
  double weight_decay = 1e-4;
  bool no_decay_bn_bias = false;
  std::string lr_schedule;
  double warmup_epochs = 0;
  WarmupStart warmup_start = WarmupStart::zero;
  int lr_update_every = 1;
  bool scale_lr = false;
  double clip_grad_norm = 0;
  OnNonfinite on_nonfinite = OnNonfinite::stop;
  int eval_batch_size = 256;
  bool eval_reset_state = false;
  bool eval_windows = false;
  EvalModel eval_model = EvalModel::consensus;
  // Record
  std::string db;
  std::string db_dir = "runs";
  int log_every = 10;
  int grad_stats_every = 0;
  int norm_study_every = 0;
  bool barrier_before_communicate = false;
  std::string network = "local";
  double emulate_link_mbps = 0;
  std::string dump_params;
  bool quiet = false;
  // Checkpoints
  std::string checkpoint_dir;
  int checkpoint_every = 0;         // epochs; 0: none on a schedule
  long checkpoint_every_steps = 0;  // iterations; 0: none on a schedule
  ResumeFrom resume;                // --resume

  // Not an option: the options of the --config file that --algo does not take (a paper's config
  // run with another algorithm of its paper), each by its key in the run record's JSON with why,
  // e.g. "topology": "--topology applies to the gossip algorithms (...), not --algo dense". They
  // keep their defaults; the run record keeps this under "left_out".
  std::map<std::string, std::string> left_out;
};

// Whether an option enters the computation hash: what a run computes does; where and how it runs
// and is recorded (threads, files, checkpoints, timeouts) does not, so a resumed run may change it.
enum class Hash { yes, no };

// The options as JSON, one key per option, its flag with '-' → '_' (the run's recorded config),
// extension options included. Derived from the declarations in options.cpp.
void to_json(nlohmann::json& json, const Options& options);

// Declares every option on `app`, grouped for --help, writing into `options` (the extension
// options into their own values).
void add_options(CLI::App& app, Options& options);

// An option of a program of one's own (an algorithm added with algorithms::add_algorithm),
// declared once as the built-in ones are: listed in --help under `group`, read from the TOML file,
// recorded in the run's config JSON under its flag ('-' → '_') and, with Hash::yes, part of the
// computation hash a resume checks. Add it before options are parsed; the returned value is its
// default until then and what was given after. Throws std::invalid_argument for a flag taken by
// another extension option (one taken by a built-in option fails at the parse).
std::shared_ptr<const long> add_extension_option(const std::string& flag, long default_value,
                                                 const std::string& help, const std::string& group,
                                                 Hash hash = Hash::yes);
std::shared_ptr<const double> add_extension_option(const std::string& flag, double default_value,
                                                   const std::string& help,
                                                   const std::string& group, Hash hash = Hash::yes);
std::shared_ptr<const std::string> add_extension_option(const std::string& flag,
                                                        std::string default_value,
                                                        const std::string& help,
                                                        const std::string& group,
                                                        Hash hash = Hash::yes);

// exit_ok: --help was printed (when `print` is set); version, check_build: --version or
// --check-build was given, for the caller to answer (build_report.hpp); check_data: --check-data
// was given with valid options, for the caller to read the data set (data_check_command.hpp).
enum class ParseOutcome { run, exit_ok, version, check_build, check_data };

// Parses argv (and --config FILE). An option the file sets that --algo does not take is left out,
// noted in options.left_out; on the command line such an option is refused.
// Throws UsageError naming the option and the problem.
ParseOutcome parse_options(int argc, const char* const* argv, Options& options, bool print);

// The data-set options as the loaders take them.
data::DatasetOptions dataset_options(const Options& options);

// The algorithm's configuration, with the sparse algorithms' defaults filled in; throws UsageError
// for combinations that make no sense (e.g. --selector with --algo dense).
algorithms::AlgorithmConfig algorithm_config(const Options& options);

// --warmup-start as LrSchedule takes it: the fraction of the lr the warm-up starts from (0 for
// zero, 1/P for lr-over-workers).
double warmup_start_fraction(const Options& options, int workers);

// Checks that need several options together; throws UsageError. An option only some data sets or
// models take is refused where it was `given` (commsgd-train: what its parser counted, so an
// option at its default value counts; a flag written false asks for nothing); without `given`,
// where its value differs from the default (options built in code).
void validate(const Options& options);
void validate(const Options& options, const algorithms::OptionGiven& given);

// A hash of the options that change what a run computes (those declared with Hash::yes): a
// checkpoint is resumed only by a run with the same.
std::uint64_t computation_hash(const Options& options);

// The keys of the recorded options that are not part of a run's configuration: those outside the
// computation hash, and the seed. Runs whose configurations are equal differ only in seed, and
// reports average over them (analysis/report/configurations.hpp).
std::vector<std::string> keys_outside_configuration(const Options& options);

}  // namespace commsgd::trainer
