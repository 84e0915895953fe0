#pragma once

namespace commsgd::trainer {

// The whole of commsgd-train: options, MPI, training, exit code (0 done, 2 bad input, 1 failed,
// 128 + N on signal N). A program that adds its own algorithms (algorithms::add_algorithm) and
// then calls this is commsgd-train with those algorithms in --algo.
int commsgd_train_main(int argc, char** argv);

}  // namespace commsgd::trainer
