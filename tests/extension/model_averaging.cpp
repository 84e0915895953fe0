// A ninth algorithm added as docs/design.md ("The table of algorithms") says one is: its class and
// its row, this one file. Test-only: model averaging (each rank steps on its own gradient, then
// the ranks average their parameters, every iteration), launched under mpirun by
// tests/mpi/test_extension.cpp as commsgd-train-extended --algo model-averaging.
#include "algorithms/catalog.hpp"
#include "kernels/ops.hpp"
#include "trainer/commsgd_train.hpp"

namespace {

using namespace commsgd;

class ModelAveraging final : public algorithms::Algorithm {
 public:
  explicit ModelAveraging(comm::Communicator& comm) : comm_(comm) {}

  // Written against buffers and kernels/ops.hpp, so it works wherever the model is.
  bool works_in(kernels::Memory) const override { return true; }
  void synchronize_gradients(kernels::Buffer<float>) override {}
  void after_step(kernels::Buffer<float> params) override {
    comm_.allreduce(params, comm::ReduceOp::sum);
    kernels::ops::scale(params, 1.0f / static_cast<float>(comm_.size()));
    stats_.entries_sent += params.size();
    stats_.entries_offered += params.size();
  }
  algorithms::AlgorithmStats stats() const override { return stats_; }
  void save_state(algorithms::StateWriter&) override {}
  void load_state(algorithms::StateReader&) override {}

 private:
  comm::Communicator& comm_;
  algorithms::AlgorithmStats stats_;
};

}  // namespace

int main(int argc, char** argv) {
  commsgd::algorithms::add_algorithm(
      {.name = "model-averaging",
       .family = commsgd::algorithms::Family::dense,
       .summary = "each rank steps alone, then the parameters are averaged (test-only)",
       .make = [](const commsgd::algorithms::AlgorithmConfig&, commsgd::comm::Communicator& comm)
           -> std::unique_ptr<commsgd::algorithms::Algorithm> {
         return std::make_unique<ModelAveraging>(comm);
       }});
  return commsgd::trainer::commsgd_train_main(argc, argv);
}
