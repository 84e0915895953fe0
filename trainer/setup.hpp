// Setting a run up: everything it needs, built identically on every rank before training starts.
#pragma once

#include <torch/types.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "algorithms/algorithm.hpp"
#include "algorithms/comm/communicator.hpp"
#include "analysis/record/run_database.hpp"
#include "analysis/record/writer_claim.hpp"
#include "trainer/data/batch_reader.hpp"
#include "trainer/data/dataset.hpp"
#include "trainer/data/sampler.hpp"
#include "trainer/data/text_corpus.hpp"
#include "trainer/flat_parameters.hpp"
#include "trainer/models.hpp"
#include "trainer/options.hpp"
#include "trainer/run_info.hpp"
#include "trainer/setup_check.hpp"

namespace commsgd::trainer {

// Everything a run needs, built identically on every rank before training starts.
struct Setup {
  torch::Device device = torch::kCPU;
  data::Dataset dataset;
  std::size_t loader_threads = 1;  // image-folder: decoding threads per batch reader
  std::shared_ptr<Model> model;
  std::unique_ptr<FlatParameters> flat;
  std::unique_ptr<data::DistributedSampler> sampler;                    // classifiers
  std::optional<data::TokenStreams> train_streams, validation_streams;  // language models
  std::optional<data::TokenWindows> validation_windows;  // language models with --eval-windows
  std::unique_ptr<algorithms::Algorithm> algorithm;
  long iterations_per_epoch = 0;
  std::unique_ptr<record::WriterClaim> db_claim;  // rank 0, --db on a network file system
  std::optional<record::RunDatabase> db;          // rank 0 only
  record::RunInfo run;
};

// `o` with --device auto resolved for this run: cuda where this build communicates on GPUs and
// LibTorch sees one, else cpu (resolve_auto_device), the same on every rank; other devices as
// they are. The run records and hashes the resolved device, not auto: a run under auto on a
// CPU-only node computes exactly what --device cpu does, so it is recorded as that, its
// checkpoints resume under --device cpu and under auto on that node again, and those of runs
// from before auto (the default was cpu) resume under the new default. Collective, on every rank
// whatever its --device; throws SetupFailed on every rank when ranks came to different devices.
Options with_device_resolved(const Options& o, comm::Communicator& comm);

// Everything a run needs: the device, threads, data, model, sampler or streams, algorithm and
// run description. Throws UsageError on input that cannot work (a batch larger than a shard).
Setup set_up(const Options& o, comm::Communicator& comm, const comm::Placement& where);

// Images are decoded by a prefetching loader, every other data set is gathered from memory.
// Training batches are augmented as --augment says; with an image folder that is torchvision's
// random-resized crop and flip, and without it the validation transform.
std::unique_ptr<data::BatchReader> make_reader(const Options& o, const data::Dataset& ds,
                                               bool training, int rank, std::size_t loader_threads);

// Runs `step` on every rank and fails setup everywhere if it threw anywhere. A SetupFailed from
// `step` was agreed on by every rank already, and passes through as it is.
template <class Step>
void set_up_together(comm::Communicator& comm, Step&& step) {
  std::optional<std::string> error;
  try {
    step();
  } catch (const SetupFailed&) {
    throw;
  } catch (const std::exception& e) {
    error = e.what();
  }
  agree_on_setup(comm, error);
}

}  // namespace commsgd::trainer
