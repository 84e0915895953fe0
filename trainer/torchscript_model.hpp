#pragma once

#include <memory>

#include "trainer/models.hpp"

namespace commsgd::trainer {

// --model torchscript: a module saved with torch.jit.save (tools/export_torchscript.py), loaded
// with LibTorch and trained like a built-in model. Its trainable parameters become the model's
// parameters, so FlatParameters moves them into the flat buffer the module itself then reads;
// its floating-point buffers and frozen parameters become the model's buffers (broadcast from
// rank 0 at the start, never updated by the algorithms). Checked on a batch of two zero samples
// of the data set's shape in eval mode: the output must be logits [2, spec.classes].
// Throws UsageError naming the file and the problem: missing, not a TorchScript archive, no
// trainable parameters, a forward that fails or does not fit the data set.
std::shared_ptr<Model> load_torchscript_model(const ModelSpec& spec);

}  // namespace commsgd::trainer
