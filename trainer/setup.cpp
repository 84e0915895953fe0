#include "trainer/setup.hpp"

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <fmt/core.h>
#include <torch/cuda.h>
#include <torch/utils.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include "algorithms/catalog.hpp"
#include "trainer/device_choice.hpp"
#include "trainer/device_comm.hpp"

namespace commsgd::trainer {
namespace {

bool augment_enabled(const Options& o) {
  return o.augment == Augment::on || (o.augment == Augment::automatic &&
                                      data::dataset_table().find(o.dataset).augmented_by_default);
}

// A language model's batches: each rank's share of the text as --batch-size streams (and the
// validation text as --eval-batch-size streams, or with --eval-windows as batches of that many
// windows), --bptt tokens of each per iteration.
void set_up_token_streams(const Options& o, comm::Communicator& comm, Setup& s) {
  const auto share = [&](std::size_t tokens) {
    return tokens / static_cast<std::size_t>(comm.size());
  };
  const auto check_streams = [&](const char* option, int streams, std::size_t tokens) {
    if (share(tokens) / static_cast<std::size_t>(streams) < 2) {
      throw UsageError(fmt::format(
          "{} {}: the text ({} tokens over {} workers) is too short for that many streams", option,
          streams, tokens, comm.size()));
    }
  };
  check_streams("--batch-size", o.batch_size, s.dataset.train_size());
  if (!o.eval_windows) {
    check_streams("--eval-batch-size", o.eval_batch_size, s.dataset.validation_size());
  }
  s.train_streams.emplace(s.dataset.text->train, comm.rank(), comm.size(),
                          static_cast<std::size_t>(o.batch_size), static_cast<std::size_t>(o.bptt));
  if (o.eval_windows) {
    try {
      s.validation_windows.emplace(s.dataset.text->validation, comm.rank(), comm.size(),
                                   static_cast<std::size_t>(o.eval_batch_size),
                                   static_cast<std::size_t>(o.bptt));
    } catch (const data::DataError& e) {
      throw UsageError(fmt::format("--eval-windows with --eval-batch-size {} and --bptt {}: {}",
                                   o.eval_batch_size, o.bptt, e.what()));
    }
  } else {
    s.validation_streams.emplace(s.dataset.text->validation, comm.rank(), comm.size(),
                                 static_cast<std::size_t>(o.eval_batch_size),
                                 static_cast<std::size_t>(o.bptt));
  }
  s.iterations_per_epoch = static_cast<long>(s.train_streams->full_batches());
  if (s.iterations_per_epoch == 0) {
    throw UsageError(fmt::format(
        "--bptt {} is longer than each worker's streams of the training text ({} tokens over "
        "{} workers and --batch-size {} streams)",
        o.bptt, s.dataset.train_size(), comm.size(), o.batch_size));
  }
}

// --device (auto resolved already: with_device_resolved) as a LibTorch device; "cuda" is the GPU of
// the rank's node-local rank (modulo the GPUs it sees, for a launcher that already gave each rank
// its own).
torch::Device resolve_device(const std::string& option, int local_rank) {
  if (option == "cpu") return torch::kCPU;
  if (!torch::cuda::is_available()) {
    throw UsageError("--device " + option +
                     ": LibTorch sees no CUDA device (no GPU visible to this rank, or a LibTorch "
                     "built without CUDA)");
  }
  const auto gpus = static_cast<int>(torch::cuda::device_count());
  const int index = option == "cuda" ? local_rank % gpus : std::stoi(option.substr(5));
  if (index >= gpus) {
    throw UsageError(fmt::format("--device {}: this rank sees {} GPUs", option, gpus));
  }
  return {torch::kCUDA, static_cast<torch::DeviceIndex>(index)};
}

}  // namespace

Options with_device_resolved(const Options& o, comm::Communicator& comm) {
  Options resolved = o;
  // LibTorch is asked only when its answer is needed: asking starts CUDA's driver, which a run on
  // the CPU never did.
  const bool cuda_built = device_comm_built();
  const bool gpu_visible = o.device == "auto" && cuda_built && torch::cuda::is_available();
  resolved.device = resolve_auto_device(o.device, cuda_built, gpu_visible);
  std::int64_t on_gpu = resolved.device == "cpu" ? 0 : 1;
  comm.allreduce(std::span(&on_gpu, 1), comm::ReduceOp::sum);
  if (const std::optional<std::string> problem =
          device_disagreement(o.device, static_cast<int>(on_gpu), comm.size())) {
    throw SetupFailed(*problem, comm.rank() == 0);
  }
  return resolved;
}

// Images are decoded by a prefetching loader, every other data set is gathered from memory.
// Training batches are augmented as --augment says; with an image folder that is torchvision's
// random-resized crop and flip, and without it the validation transform.
std::unique_ptr<data::BatchReader> make_reader(const Options& o, const data::Dataset& ds,
                                               bool training, int rank,
                                               std::size_t loader_threads) {
  const bool augment = training && augment_enabled(o);
  const std::uint64_t rng_state = o.seed * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(rank);
  const std::optional<data::ImageFolder>& images =
      training ? ds.train_images : ds.validation_images;
  if (images) {
    const data::ImageLoaderOptions loader{
        .output_size = ds.shape.height,
        .threads = loader_threads,
        .prefetch = 2,
        .mode = augment ? data::ImageMode::train : data::ImageMode::validation,
        .squash_size = o.image_squash,
        .val_crop_fraction = o.val_crop_fraction,
        .resized_crop = o.resized_crop};
    return std::make_unique<data::BatchReader>(*images, loader, rng_state);
  }
  return std::make_unique<data::BatchReader>(
      training ? ds.train : ds.validation, ds.shape,
      data::Augmentation{.random_crop = augment,
                         .horizontal_flip = augment,
                         .fill = o.crop_fill == CropFill::black ? ds.black : std::vector<float>{}},
      rng_state);
}

Setup set_up(const Options& o, comm::Communicator& comm, const comm::Placement& where) {
  Setup s;
  // Agreed on before anything collective: a rank that sees no GPU must not leave the others
  // waiting in the exchange of GPU identities below.
  std::optional<std::string> device_error;
  try {
    s.device = resolve_device(o.device, where.local_rank);
  } catch (const UsageError& e) {
    device_error = e.what();
  }
  agree_on_setup(comm, device_error);
  if (s.device.is_cuda()) at::globalContext().setAllowTF32CuDNN(!o.no_tf32);
  const int cores_per_rank = std::max(
      1, static_cast<int>(std::thread::hardware_concurrency()) / std::max(1, where.local_size));
  at::set_num_threads(o.threads > 0 ? o.threads : cores_per_rank);

  s.dataset = data::load_dataset(dataset_options(o));
  s.loader_threads =
      static_cast<std::size_t>(o.loader_threads > 0 ? o.loader_threads : cores_per_rank);
  torch::manual_seed(o.seed);
  ModelSpec spec{o.model,
                 s.dataset.shape.channels,
                 s.dataset.shape.height,
                 s.dataset.shape.width,
                 s.dataset.num_classes,
                 o.mlp_hidden,
                 {o.lstm_hidden, o.lstm_layers, o.lstm_dropout, !o.untie_embeddings},
                 {o.zero_init_residual, o.fc_init_std, o.uniform_fan_out_init},
                 o.model_file};
  s.model = make_model(spec);
  s.model->to(s.device);
  std::string device_backend;
  if (s.device.is_cuda()) {
    // Before the algorithm, whose communication threads duplicate the communicator.
    if (!device_comm_built()) {
      throw UsageError("--device " + o.device +
                       ": this commsgd-train was built without the CUDA toolkit, which it needs "
                       "to communicate buffers on the GPU");
    }
    const std::vector<GpuUuid> gpus = gather_gpu_uuids(comm, s.device.index());
    const std::optional<SharedGpu> shared = find_shared_gpu(gpus);
    if (shared && o.device != "cuda") {
      const auto first = static_cast<std::size_t>(shared->first_rank);
      throw UsageError(fmt::format(
          "--device {}: ranks {} and {} would drive one GPU ({}), and NCCL takes one rank per "
          "GPU; --device cuda gives each rank of a node the GPU of its node-local rank (ranks "
          "beyond the node's GPUs then share them, over MPI)",
          o.device, shared->first_rank, shared->second_rank, gpu_uuid_text(gpus[first])));
    }
    device_backend = attach_device_backend(
        comm, s.device.index(), device_backend_for(shared.has_value(), o.emulate_link_mbps > 0));
  }
  s.algorithm = algorithms::make_algorithm(algorithm_config(o), comm);
  // On a GPU, an algorithm written for device buffers works on the model's own; the others get
  // host copies (staging) and MPI.
  const bool on_gpu = s.device.is_cuda() && s.algorithm->works_in(kernels::Memory::cuda);
  s.flat = std::make_unique<FlatParameters>(
      *s.model, on_gpu ? FlatParameters::Staging::never : FlatParameters::Staging::when_needed);
  try {
    s.algorithm->set_layout(s.flat->layout());
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());  // an option that does not fit the model (--powersgd-rank)
  }

  if (s.dataset.text) {
    set_up_token_streams(o, comm, s);
  } else {
    s.sampler = std::make_unique<data::DistributedSampler>(s.dataset.train_size(), comm.rank(),
                                                           comm.size(), o.seed);
    if (static_cast<std::size_t>(o.batch_size) > s.sampler->shard_size()) {
      throw UsageError(
          fmt::format("--batch-size {} is larger than each worker's shard of the "
                      "training set ({} samples over {} workers = {})",
                      o.batch_size, s.dataset.train_size(), comm.size(), s.sampler->shard_size()));
    }
    s.iterations_per_epoch = static_cast<long>(s.sampler->shard_size()) / o.batch_size;
  }
  if (s.algorithm->overlaps_backward()) {
    algorithms::Algorithm* algorithm = s.algorithm.get();
    s.flat->on_gradient_ready([algorithm](std::size_t offset, std::size_t count) {
      algorithm->gradient_ready(offset, count);
    });
  }

  s.run = make_run_info(o, s.device.str(), comm.size(), where.nodes, s.flat->params().size());
  if (on_gpu) s.run.backend = device_backend;
  return s;
}

}  // namespace commsgd::trainer
