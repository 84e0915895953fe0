#include "trainer/step_metrics.hpp"

namespace commsgd::trainer {

std::array<double, StepMetrics::kFields> StepMetrics::fields_of(const IterationSample& s) {
  return {s.loss,     s.data_s,  s.forward_backward_s, s.select_s,       s.communicate_s, s.wait_s,
          s.update_s, s.total_s, s.bytes_sent,         s.bytes_received, s.density};
}

void StepMetrics::add(const IterationSample& sample) {
  const auto fields = fields_of(sample);
  for (std::size_t i = 0; i < kFields; ++i) sum_[i] += fields[i];
  ++iterations_;
}

record::StepRow StepMetrics::reduce(comm::Communicator& comm, std::int64_t step, int epoch) {
  std::array<double, kFields> mean{}, max{};
  for (std::size_t i = 0; i < kFields; ++i) {
    mean[i] = iterations_ > 0 ? sum_[i] / iterations_ : 0.0;
    max[i] = mean[i];
  }
  comm.allreduce(std::span(mean), comm::ReduceOp::sum);
  comm.allreduce(std::span(max), comm::ReduceOp::max);
  for (double& m : mean) m /= comm.size();
  sum_.fill(0.0);
  iterations_ = 0;

  record::StepRow row;
  row.step = step;
  row.epoch = epoch;
  record::Stat* stats[kFields] = {&row.loss,           &row.data_s,        &row.forward_backward_s,
                                  &row.select_s,       &row.communicate_s, &row.wait_s,
                                  &row.update_s,       &row.total_s,       &row.bytes_sent,
                                  &row.bytes_received, &row.density};
  for (std::size_t i = 0; i < kFields; ++i) *stats[i] = {mean[i], max[i]};
  return row;
}

}  // namespace commsgd::trainer
