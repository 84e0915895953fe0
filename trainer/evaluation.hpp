// What an epoch's validation scores, for the classifiers and the language models, and the
// evaluation of what an algorithm says is the model.
#pragma once

#include <torch/types.h>
#include <torch/utils.h>

#include <optional>

#include "algorithms/algorithm.hpp"
#include "algorithms/comm/communicator.hpp"
#include "trainer/data/batch_reader.hpp"
#include "trainer/data/dataset.hpp"
#include "trainer/data/text_corpus.hpp"
#include "trainer/flat_parameters.hpp"
#include "trainer/models.hpp"

namespace commsgd::trainer {

struct Evaluation {
  double loss = 0, top1 = 0;
  std::optional<double> top5;
  std::optional<double> perplexity;  // language models
};

// Each rank scores the validation samples i ≡ rank (mod P), or with `every_sample` all of them;
// the sums are combined, so the score is the whole set's (every sample counted once), or the
// mean over ranks of each rank's score on the whole set.
Evaluation evaluate_classifier(Model& model, data::BatchReader& validation, const data::Dataset& ds,
                               int batch_size, bool every_sample, const torch::Device& device,
                               comm::Communicator& comm);

// Each rank reads its contiguous share of the validation text as streams, from a fresh state
// (every batch, with `reset_every_batch`); every token is scored once. Perplexity is exp of the
// mean loss per token.
Evaluation evaluate_language_model(Model& model, const data::TokenStreams& validation,
                                   bool reset_every_batch, const torch::Device& device,
                                   comm::Communicator& comm);

// The validation text as the gTop-k and GaussianK-SGD codes score it: each rank its share of the
// batches of windows, each batch from a zero state; the loss is the mean over every scored target.
Evaluation evaluate_language_model(Model& model, const data::TokenWindows& validation,
                                   const torch::Device& device, comm::Communicator& comm);

// Evaluates what the algorithm says is the model (for gossip algorithms the consensus average,
// which it puts in the parameters), or with `own_parameters` each rank's own, leaving the local
// parameters as they were. The consensus is taken either way: it is what gives the gossip
// algorithms' consensus distance.
template <class Evaluate>
Evaluation evaluate_model(Model& model, FlatParameters& flat, algorithms::Algorithm& algorithm,
                          bool own_parameters, Evaluate&& evaluate) {
  const torch::NoGradGuard no_grad;
  model.eval();
  algorithm.begin_evaluation(flat.params(), own_parameters);
  flat.params_to_device();
  const Evaluation e = evaluate();
  algorithm.end_evaluation(flat.params());
  flat.params_to_device();
  model.train();
  return e;
}

}  // namespace commsgd::trainer
