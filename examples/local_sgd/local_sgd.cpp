// Local SGD (Stich, "Local SGD Converges Fast and Communicates Little", ICLR 2019; Lin et al.,
// "Don't Use Large Mini-Batches, Use Local SGD", ICLR 2020) as an algorithm of one's own, built
// against an installed commsgd: every rank takes --local-steps optimizer steps on its own
// gradients, then the ranks average their parameters, so the network carries the model once
// every --local-steps iterations instead of a gradient every iteration. Momentum stays local, as in
// both papers' experiments.
//
// One file, as docs/design.md ("The table of algorithms") says an algorithm is: its class, its
// row in the table and its option, added before commsgd_train_main runs. The program is
// commsgd-train with one algorithm and one option more: --help lists --local-steps, a TOML file
// may set it, and the run record and the reports work as for the built-in ones.
//   mpirun -np 4 local-sgd-train --algo local-sgd --local-steps 4 --config configs/digits.toml
#include <cstdint>
#include <memory>
#include <stdexcept>

#include "algorithms/catalog.hpp"
#include "kernels/ops.hpp"
#include "trainer/commsgd_train.hpp"
#include "trainer/options.hpp"

namespace {

using namespace commsgd;

// --local-steps: how many steps a rank takes alone between two averages (read once parsed).
std::shared_ptr<const long> local_steps;

class LocalSgd final : public algorithms::Algorithm {
 public:
  LocalSgd(comm::Communicator& comm, std::uint64_t steps) : comm_(comm), local_steps_(steps) {}

  // Written against buffers and kernels/ops.hpp, so it works wherever the model is.
  bool works_in(kernels::Memory) const override { return true; }

  // Each rank steps on its own gradient: nothing crosses the network here.
  void synchronize_gradients(kernels::Buffer<float> gradient) override {
    stats_.entries_offered += gradient.size();
  }

  // Every local_steps_-th step, x = (1/P) Σ_r x_r.
  void after_step(kernels::Buffer<float> params) override {
    if (++steps_ % local_steps_ != 0) return;
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
  const std::uint64_t local_steps_;
  std::uint64_t steps_ = 0;
  algorithms::AlgorithmStats stats_;
};

}  // namespace

int main(int argc, char** argv) {
  // Hashed: a checkpoint resumes only with the same --local-steps.
  local_steps = trainer::add_extension_option(
      "--local-steps", 4L, "Steps a rank takes alone between two averages (>= 1)", "Local SGD");
  algorithms::add_algorithm(
      {.name = "local-sgd",
       .family = algorithms::Family::dense,
       .summary = "local SGD: --local-steps steps alone, then the parameters are averaged",
       .make = [](const algorithms::AlgorithmConfig&,
                  comm::Communicator& comm) -> std::unique_ptr<algorithms::Algorithm> {
         if (*local_steps < 1) throw std::invalid_argument("--local-steps must be >= 1");
         return std::make_unique<LocalSgd>(comm, static_cast<std::uint64_t>(*local_steps));
       }});
  return trainer::commsgd_train_main(argc, argv);
}
