#include "trainer/evaluation.hpp"

#include <torch/nn/functional/loss.h>

#include <array>
#include <cmath>
#include <vector>

namespace commsgd::trainer {
namespace {

// Sums for an evaluation: loss, top-1 hits, top-5 hits, rows scored.
using EvaluationSums = std::array<double, 4>;

void score(const torch::Tensor& logits, const torch::Tensor& y, bool has_top5,
           EvaluationSums& sums) {
  sums[0] += torch::nn::functional::cross_entropy(
                 logits, y, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum))
                 .item<double>();
  const torch::Tensor top = std::get<1>(logits.topk(has_top5 ? 5 : 1, 1));
  const torch::Tensor hits = top.eq(y.unsqueeze(1));
  sums[1] += hits.select(1, 0).sum().item<double>();
  if (has_top5) sums[2] += hits.any(1).sum().item<double>();
  sums[3] += static_cast<double>(y.numel());
}

Evaluation combine(EvaluationSums sums, bool has_top5, comm::Communicator& comm) {
  comm.allreduce(std::span(sums), comm::ReduceOp::sum);
  Evaluation e;
  e.loss = sums[0] / sums[3];
  e.top1 = sums[1] / sums[3];
  if (has_top5) e.top5 = sums[2] / sums[3];
  return e;
}

}  // namespace

// Each rank scores the validation samples i ≡ rank (mod P), or with `every_sample` all of them;
// the sums are combined, so the score is the whole set's (every sample counted once), or the
// mean over ranks of each rank's score on the whole set.
Evaluation evaluate_classifier(Model& model, data::BatchReader& validation, const data::Dataset& ds,
                               int batch_size, bool every_sample, const torch::Device& device,
                               comm::Communicator& comm) {
  const data::SampleShape& shape = ds.shape;
  std::vector<std::uint32_t> indices;
  const auto first_index = every_sample ? 0 : static_cast<std::size_t>(comm.rank());
  const auto stride = every_sample ? 1 : static_cast<std::size_t>(comm.size());
  for (std::size_t i = first_index; i < ds.validation_size(); i += stride) {
    indices.push_back(static_cast<std::uint32_t>(i));
  }
  const auto b = static_cast<std::size_t>(batch_size);
  validation.begin_epoch(indices, b, 0);
  const bool has_top5 = ds.num_classes > 5;
  EvaluationSums sums{};
  std::vector<float> features;
  std::vector<std::int64_t> labels;
  for (std::size_t first = 0; first < indices.size(); first += b) {
    const std::size_t count = std::min(b, indices.size() - first);
    features.resize(count * shape.numel());
    labels.resize(count);
    validation.read(first, count, features, labels);
    const auto n = static_cast<std::int64_t>(count);
    const torch::Tensor x =
        torch::from_blob(features.data(), {n, shape.channels, shape.height, shape.width});
    score(model.forward(x.to(device)),
          torch::from_blob(labels.data(), {n}, torch::kInt64).to(device), has_top5, sums);
  }
  return combine(sums, has_top5, comm);
}

namespace {

// The batches of TokenStreams or TokenWindows, scored from a fresh state (and again before every
// batch with `reset_every_batch`).
template <class TokenBatches>
Evaluation score_text(Model& model, const TokenBatches& validation, bool reset_every_batch,
                      const torch::Device& device, comm::Communicator& comm) {
  model.reset_state();
  EvaluationSums sums{};
  std::vector<std::int64_t> tokens, targets;
  for (std::size_t batch = 0; batch < validation.batches(); ++batch) {
    if (reset_every_batch) model.reset_state();
    const std::size_t rows = validation.rows(batch);
    tokens.resize(rows * validation.streams());
    targets.resize(tokens.size());
    validation.read(batch, tokens, targets);
    const auto shape = {static_cast<std::int64_t>(rows),
                        static_cast<std::int64_t>(validation.streams())};
    score(
        model.forward(torch::from_blob(tokens.data(), shape, torch::kInt64).to(device)),
        torch::from_blob(targets.data(), {static_cast<std::int64_t>(targets.size())}, torch::kInt64)
            .to(device),
        true, sums);
  }
  model.reset_state();
  Evaluation e = combine(sums, true, comm);
  e.perplexity = std::exp(e.loss);
  return e;
}

}  // namespace

Evaluation evaluate_language_model(Model& model, const data::TokenStreams& validation,
                                   bool reset_every_batch, const torch::Device& device,
                                   comm::Communicator& comm) {
  return score_text(model, validation, reset_every_batch, device, comm);
}

Evaluation evaluate_language_model(Model& model, const data::TokenWindows& validation,
                                   const torch::Device& device, comm::Communicator& comm) {
  return score_text(model, validation, true, device, comm);
}

}  // namespace commsgd::trainer
