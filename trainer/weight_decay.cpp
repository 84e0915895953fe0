#include "trainer/weight_decay.hpp"

namespace commsgd::trainer {

std::vector<DecayStretch> decay_stretches(torch::nn::Module& model, bool spare_one_dimensional) {
  std::vector<DecayStretch> stretches;
  std::size_t offset = 0;
  for (const torch::Tensor& p : model.parameters()) {
    const bool decays = !(spare_one_dimensional && p.dim() == 1);
    const auto count = static_cast<std::size_t>(p.numel());
    if (!stretches.empty() && stretches.back().decays == decays) {
      stretches.back().count += count;
    } else {
      stretches.push_back({offset, count, decays});
    }
    offset += count;
  }
  return stretches;
}

}  // namespace commsgd::trainer
