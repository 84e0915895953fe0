// Local SGD (Stich, "Local SGD Converges Fast and Communicates Little", ICLR 2019; Lin et al.,
// "Don't Use Large Mini-Batches, Use Local SGD", ICLR 2020) as an algorithm of one's own, built
// against an installed commsgd: every rank takes kLocalSteps optimizer steps on its own
// gradients, then the ranks average their parameters, so the network carries the model once
// every kLocalSteps iterations instead of a gradient every iteration. Momentum stays local, as in
// both papers' experiments.
//
// One file, as docs/design.md ("The table of algorithms") says an algorithm is: its class, and
// its row in the table, added before commsgd_train_main runs. The program is commsgd-train with
// one algorithm more: every option, the run record and the reports work as for the built-in ones.
//   mpirun -np 4 local-sgd-train --algo local-sgd --config configs/digits.toml
#include <cstdint>
#include <memory>

#include "algorithms/catalog.hpp"
#include "kernels/ops.hpp"
#include "trainer/commsgd_train.hpp"

namespace {

using namespace commsgd;

// How many steps a rank takes alone between two averages.
constexpr std::uint64_t kLocalSteps = 4;

class LocalSgd final : public algorithms::Algorithm {
 public:
  explicit LocalSgd(comm::Communicator& comm) : comm_(comm) {}

  // Written against buffers and kernels/ops.hpp, so it works wherever the model is.
  bool works_in(kernels::Memory) const override { return true; }

  // Each rank steps on its own gradient: nothing crosses the network here.
  void synchronize_gradients(kernels::Buffer<float> gradient) override {
    stats_.entries_offered += gradient.size();
  }

  // Every kLocalSteps-th step, x = (1/P) Σ_r x_r.
  void after_step(kernels::Buffer<float> params) override {
    if (++steps_ % kLocalSteps != 0) return;
    comm_.allreduce(params, comm::ReduceOp::sum);
    kernels::ops::scale(params, 1.0f / static_cast<float>(comm_.size()));
    stats_.entries_sent += params.size();
  }

  algorithms::AlgorithmStats stats() const override { return stats_; }
  // Where in the cycle of local steps a run stopped, so that a resumed run averages when the
  // uninterrupted one would have.
  void save_state(algorithms::StateWriter& out) override { out.write(steps_); }
  void load_state(algorithms::StateReader& in) override { steps_ = in.read<std::uint64_t>(); }

 private:
  comm::Communicator& comm_;
  std::uint64_t steps_ = 0;
  algorithms::AlgorithmStats stats_;
};

}  // namespace

int main(int argc, char** argv) {
  algorithms::add_algorithm(
      {.name = "local-sgd",
       .family = algorithms::Family::dense,
       .summary = "local SGD: 4 steps alone, then the parameters are averaged",
       .make = [](const algorithms::AlgorithmConfig&, comm::Communicator& comm)
           -> std::unique_ptr<algorithms::Algorithm> { return std::make_unique<LocalSgd>(comm); }});
  return trainer::commsgd_train_main(argc, argv);
}
