// A test-only algorithm that gathers: every rank allgathers its whole gradient and averages the P
// gradients itself (dense S-SGD by allgather), launched under mpirun by
// tests/mpi/test_extension.cpp as commsgd-train-allgather --algo gradient-allgather. Like
// model_averaging.cpp it never writes the byte counters of its stats: the record counts its
// traffic at the communicator.
#include <memory>
#include <span>
#include <vector>

#include "algorithms/catalog.hpp"
#include "trainer/commsgd_train.hpp"

namespace {

using namespace commsgd;

class GradientAllgather final : public algorithms::Algorithm {
 public:
  explicit GradientAllgather(comm::Communicator& comm) : comm_(comm) {}

  void synchronize_gradients(kernels::Buffer<float> grads) override {
    const std::span<float> g = grads.host("gradient-allgather");
    gathered_.resize(g.size() * static_cast<std::size_t>(comm_.size()));
    comm_.allgather(g.data(), gathered_.data(), g.size() * sizeof(float));
    for (std::size_t i = 0; i < g.size(); ++i) {
      float sum = 0;
      for (std::size_t r = 0; r < gathered_.size(); r += g.size()) sum += gathered_[r + i];
      g[i] = sum / static_cast<float>(comm_.size());
    }
    stats_.entries_sent += g.size();
    stats_.entries_offered += g.size();
  }
  void after_step(kernels::Buffer<float>) override {}
  algorithms::AlgorithmStats stats() const override { return stats_; }
  void save_state(algorithms::StateWriter&) override {}
  void load_state(algorithms::StateReader&) override {}

 private:
  comm::Communicator& comm_;
  std::vector<float> gathered_;
  algorithms::AlgorithmStats stats_;
};

}  // namespace

int main(int argc, char** argv) {
  commsgd::algorithms::add_algorithm(
      {.name = "gradient-allgather",
       .family = commsgd::algorithms::Family::dense,
       .summary = "each rank allgathers the gradients and averages them (test-only)",
       .make = [](const commsgd::algorithms::AlgorithmConfig&, commsgd::comm::Communicator& comm)
           -> std::unique_ptr<commsgd::algorithms::Algorithm> {
         return std::make_unique<GradientAllgather>(comm);
       }});
  return commsgd::trainer::commsgd_train_main(argc, argv);
}
