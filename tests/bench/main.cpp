// commsgd-bench: one binary, one subcommand per benchmark.
#include <fmt/core.h>

#include <CLI/CLI.hpp>

#include "algorithms/comm/mpi_communicator.hpp"
#include "tests/bench/benchmarks.hpp"

int main(int argc, char** argv) {
  const commsgd::comm::MpiSession mpi(&argc, &argv);
  CLI::App app("commsgd-bench: microbenchmarks of commsgd, recorded in the bench table");
  app.require_subcommand(1);
  commsgd::bench::add_trainer_overhead(app);
  commsgd::bench::add_torchscript_model(app);
  commsgd::bench::add_peak_memory(app);
  commsgd::bench::add_kernels(app);
  commsgd::bench::add_sign_bits(app);
  commsgd::bench::add_collectives(app);
  commsgd::bench::add_pingpong(app);
  commsgd::bench::add_merge(app);
  commsgd::bench::add_dense_overlap(app);
  commsgd::bench::add_image_loader(app);
#ifdef COMMSGD_WITH_CUDA_KERNELS
  commsgd::bench::add_gpu_kernels(app);
#endif
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  } catch (const std::exception& e) {
    fmt::print(stderr, "commsgd-bench: error: {}\n", e.what());
    return 1;
  }
  return 0;
}
