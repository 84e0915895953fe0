#include "algorithms/compressed/powersgd.hpp"

#include <algorithm>
#include <random>
#include <stdexcept>
#include <string>

#include "algorithms/stopwatch.hpp"
#include "algorithms/stored_values.hpp"
#include "algorithms/traffic_meter.hpp"

namespace commsgd::algorithms {
namespace {

// The hook's min_compression_rate: a matrix is compressed where its factors are less than half
// its size.
constexpr std::size_t kMinCompressionRate = 2;

bool worth_compressing(std::size_t rows, std::size_t cols, std::size_t rank) {
  return (rows + cols) * rank * kMinCompressionRate < rows * cols;
}

// The largest rank at which an n × m matrix is worth compressing (0: none).
std::size_t largest_rank(std::size_t rows, std::size_t cols) {
  std::size_t rank = 0;
  while (worth_compressing(rows, cols, rank + 1)) ++rank;
  return rank;
}

}  // namespace

PowerSgd::PowerSgd(comm::Communicator& comm, const AlgorithmConfig& config)
    : comm_(comm),
      rank_(static_cast<std::size_t>(config.powersgd_rank)),
      start_iteration_(config.powersgd_start_iter),
      seed_(config.seed),
      barrier_(config.barrier_before_communicate),
      norm_study_(comm, config.norm_study_every, config.seed) {
  if (config.powersgd_rank < 1) throw std::invalid_argument("--powersgd-rank: must be > 0");
  if (config.powersgd_start_iter < 0) {
    throw std::invalid_argument("--powersgd-start-iter: must be >= 0");
  }
}

void PowerSgd::set_layout(std::span<const ParameterLayout> layout) {
  const std::size_t entries = layout_entries(layout, "powersgd");
  std::size_t p_entries = 0, q_entries = 0, most = 0;
  for (const ParameterLayout& parameter : layout) {
    // The hook's view: the first dimension the rows, the rest the columns (a vector: one column).
    const std::size_t count = parameter.entries();
    const std::size_t rows =
        parameter.shape.empty() ? 1 : static_cast<std::size_t>(parameter.shape[0]);
    const std::size_t cols = rows == 0 ? 0 : count / rows;
    const std::size_t rank = std::min({rows, cols, rank_});
    most = std::max(most, largest_rank(rows, cols));
    if (count > 0 && worth_compressing(rows, cols, rank)) {
      matrices_.push_back({parameter.offset, {rows, cols, rank}, p_entries, q_entries});
      p_entries += rows * rank;
      q_entries += cols * rank;
    } else {
      rest_.push_back({parameter.offset, count});
      rest_entries_ += count;
    }
  }
  if (matrices_.empty()) {
    throw std::invalid_argument(
        most == 0 ? "--algo powersgd: no parameter of this model is worth compressing, even at "
                    "rank 1 (a matrix n × m is where (n + m)·r·2 < n·m)"
                  : "--powersgd-rank " + std::to_string(rank_) +
                        ": no parameter of this model is worth compressing at that rank (a "
                        "matrix n × m is where (n + m)·r·2 < n·m); the largest rank any allows "
                        "is " +
                        std::to_string(most));
  }
  assign_zeros(error_, entries, kernels::kHost);
  assign_zeros(rest_and_ps_, rest_entries_ + p_entries, kernels::kHost);
  assign_zeros(qs_, q_entries, kernels::kHost);
}

bool PowerSgd::works_in(kernels::Memory memory) const {
  return memory == kernels::Memory::host || !norm_study_.enabled();
}

namespace {

std::vector<float> on_host(Buffer<const float> values) {
  std::vector<float> copy(values.size());
  kernels::ops::copy_to_host(values, copy);
  return copy;
}

}  // namespace

std::vector<float> PowerSgd::p_factors() const {
  return on_host(rest_and_ps_.buffer().subspan(rest_entries_, rest_and_ps_.size() - rest_entries_));
}

std::vector<float> PowerSgd::q_factors() const {
  return on_host(qs_.buffer());
}

void PowerSgd::place(kernels::Place place) {
  kernels::ops::relocate(error_, place);
  kernels::ops::relocate(rest_and_ps_, place);
  kernels::ops::relocate(qs_, place);
}

void PowerSgd::synchronize_gradients(Buffer<float> g) {
  if (g.size() != error_.size() || g.empty()) {
    throw std::logic_error("powersgd: the gradient is not the size of the layout (set_layout)");
  }
  place(g.place());
  stats_.entries_offered += g.size();
  // Entries sent: the whole gradient before the start iteration, the rest and factors after.
  stats_.entries_sent += iteration_ < start_iteration_ ? g.size() : compressed_entries();
  if (barrier_) {
    const Stopwatch watch;
    comm_.barrier();
    stats_.wait_seconds += watch.seconds();
  }
  const auto iteration = static_cast<std::uint64_t>(iteration_);
  const bool study = norm_study_.due(iteration);
  const char* const study_needs = "--norm-study-every";
  if (study) {  // x: the mean of M = g + e
    norm_study_.take_dense(g.host(study_needs), stats_, error_.buffer().host(study_needs));
  }
  const bool compressing = iteration_++ >= start_iteration_;
  if (compressing) {
    compress(g);
  } else {
    allreduce(g);
    kernels::ops::scale(g, 1.0f / static_cast<float>(comm_.size()));
  }
  if (study) {
    const std::size_t sent = compressing ? compressed_entries() : g.size();
    norm_study_.study_at_equal_bytes(g.host(study_needs), sent * sizeof(float), iteration, stats_);
  }
}

void PowerSgd::compress(Buffer<float> g) {
  const float share = 1.0f / static_cast<float>(comm_.size());
  const Buffer<float> m = error_.buffer(), rest_and_ps = rest_and_ps_.buffer(), qs = qs_.buffer();
  const Buffer<float> ps = rest_and_ps.subspan(rest_entries_, rest_and_ps.size() - rest_entries_);
  const auto matrix = [&](const Matrix& x, Buffer<float> of) {
    return of.subspan(x.offset, x.shape.rows * x.shape.cols);
  };
  const auto p = [&](const Matrix& x) {
    return ps.subspan(x.p_offset, x.shape.rows * x.shape.rank);
  };
  const auto q = [&](const Matrix& x) {
    return qs.subspan(x.q_offset, x.shape.cols * x.shape.rank);
  };

  Stopwatch watch;
  kernels::ops::add(m, g);  // M = g + e
  std::size_t next = 0;
  for (const Stretch& s : rest_) {
    kernels::ops::copy(m.subspan(s.offset, s.count), rest_and_ps.subspan(next, s.count));
    next += s.count;
  }
  if (!q_drawn_) draw_q();
  for (const Matrix& x : matrices_) {
    kernels::ops::orthonormalize_columns(q(x), x.shape.cols, x.shape.rank);
    kernels::ops::multiply(matrix(x, m), x.shape, q(x), p(x));  // P = M·Q
  }
  stats_.select_seconds += watch.seconds();

  allreduce(rest_and_ps);

  watch.restart();
  next = 0;
  for (const Stretch& s : rest_) {
    const Buffer<float> mean = g.subspan(s.offset, s.count);
    kernels::ops::copy(rest_and_ps.subspan(next, s.count), mean);
    kernels::ops::scale(mean, share);
    next += s.count;
  }
  for (const Matrix& x : matrices_) {
    kernels::ops::orthonormalize_columns(p(x), x.shape.rows, x.shape.rank);
    kernels::ops::multiply_transposed(matrix(x, m), x.shape, p(x), q(x));  // Q = Mᵀ·P
  }
  stats_.select_seconds += watch.seconds();

  allreduce(qs);

  kernels::ops::scale(qs, share);
  for (const Matrix& x : matrices_) {
    kernels::ops::outer_product(p(x), q(x), x.shape, matrix(x, g));
  }
  kernels::ops::subtract(m, g);  // e = M − g
}

// Sums `values` over the ranks: its seconds are communication (on a device, until it is done),
// its bytes the step's traffic.
void PowerSgd::allreduce(Buffer<float> values) {
  const Stopwatch watch;
  const TrafficMeter traffic(comm_);
  comm_.allreduce(values.data(), values.size(), comm::DataType::f32, comm::ReduceOp::sum,
                  values.place());
  comm_.synchronize(values.place());
  stats_.communicate_seconds += watch.seconds();
  traffic.add_to(stats_.bytes_sent, stats_.bytes_received);
}

// Q's first value, the same on every rank: standard normal entries from the run's seed, as the
// hook draws them from its own seeded generator; drawn on the host.
void PowerSgd::draw_q() {
  std::mt19937_64 rng(seed_);
  std::normal_distribution<float> normal;
  std::vector<float> q(qs_.size());
  for (float& x : q) x = normal(rng);
  kernels::ops::copy_from_host(q, qs_.buffer());
  q_drawn_ = true;
}

void PowerSgd::save_state(StateWriter& out) {
  out.write(static_cast<std::int64_t>(iteration_));
  out.write(static_cast<std::uint8_t>(q_drawn_));
  write_values(out, error_.buffer());
  write_values(out, qs_.buffer());
}

// Into host memory: synchronize_gradients moves them where the gradient is.
void PowerSgd::load_state(StateReader& in) {
  iteration_ = static_cast<long>(in.read<std::int64_t>());
  q_drawn_ = in.read<std::uint8_t>() != 0;
  read_values(in, error_, error_.size());
  read_values(in, qs_, qs_.size());
}

}  // namespace commsgd::algorithms
