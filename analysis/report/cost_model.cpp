#include "analysis/report/cost_model.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>

#include "analysis/report/open_mpi_tuned.hpp"
#include "kernels/sparse_set.hpp"

namespace commsgd::report {
namespace {

int ceil_log2(int p) {
  return p <= 1 ? 0 : std::bit_width(static_cast<unsigned>(p - 1));
}
int floor_log2(int p) {
  return std::bit_width(static_cast<unsigned>(p)) - 1;
}

// Dense's bytes per allreduce, and a sparse rank's set: the sizes Open MPI picks its algorithm by.
double bucket_bytes(const Exchange& e) {
  return e.wire_bytes * e.parameters / e.buckets;
}
double set_bytes(const Exchange& e) {
  return static_cast<double>(kernels::kSparseEntryBytes) * e.entries;
}

// A rank's packed signs: a bit an entry, in 64-bit words. ef-signsgd's scales, 8⌈T/2⌉ bytes for
// T tensors, are not in the record and left out: 1.3% of the signs for the digits MLP, under 1%
// for the other models of configs/ (about 32·T/d).
double sign_bytes(const Exchange& e) {
  return 8 * std::ceil(e.parameters / 64);
}

// A rank's QSGD code: each bucket's levels and signs in whole words, and its norm, a float.
double level_bytes(const Exchange& e) {
  const double per_word = 64 / (1 + std::floor(std::log2(e.qsgd_levels)) + 1);
  const double buckets = std::ceil(e.parameters / e.qsgd_bucket);
  const double last = e.parameters - (buckets - 1) * e.qsgd_bucket;
  return 8 * ((buckets - 1) * std::ceil(e.qsgd_bucket / per_word) + std::ceil(last / per_word)) +
         8 * std::ceil(buckets / 2);
}

// PowerSGD's two allreduces a step (the uncompressed rest and the P's, then the Q's), k entries
// of float32 in all: the record keeps k (entries sent a step), not how it splits, so each is
// priced as half of it.
double factor_bytes(const Exchange& e) {
  return 4 * e.entries / 2;
}

int dpsgd_neighbours(const Exchange& e) {
  if (e.topology == "ring") return std::min(2, e.workers - 1);
  if (e.topology == "complete") return e.workers - 1;
  return 1;  // bipartite-exponential: one partner per iteration
}

// y at x on the line between the two points of `points` (x ascending) nearest to it: the first
// point's y below them, the last's above them.
double interpolated(const std::vector<std::pair<double, double>>& points, double x) {
  if (x <= points.front().first) return points.front().second;
  if (x >= points.back().first) return points.back().second;
  const auto above = std::lower_bound(points.begin(), points.end(), x,
                                      [](const auto& point, double v) { return point.first < v; });
  const auto below = above - 1;
  const double share = (x - below->first) / (above->first - below->first);
  return below->second + share * (above->second - below->second);
}

}  // namespace

Link plain_link(double alpha, double beta) {
  Link link;
  link.exchange.alpha = alpha;
  link.exchange.beta = beta;
  return link;
}

std::vector<std::pair<double, double>> follow_on_extra(
    const MessageTime& exchange, const std::vector<std::pair<double, double>>& two_steps) {
  std::vector<std::pair<double, double>> extra;
  for (const auto& [bytes, seconds] : two_steps) {
    extra.emplace_back(bytes, std::max(0.0, seconds - 2 * exchange.seconds(bytes)));
  }
  return extra;
}

double MessageTime::seconds(double bytes) const {
  if (measured.empty() || bytes > measured.back().first) return alpha + beta * bytes;
  return interpolated(measured, bytes);
}

Transfers::Transfers(const Link& link, double idle_seconds)
    : link_(link), after_idle_(link.after_idle && idle_seconds > 0) {
  if (!after_idle_) return;
  first_latency_ = link.latency_after_idle.empty()
                       ? link.after_idle->alpha
                       : interpolated(link.latency_after_idle, idle_seconds);
  if (link.exchange.beta > 0) {
    tokens_ = std::min(link.burst_bytes, idle_seconds / link.exchange.beta);
  }
}

double Transfers::exchange(double bytes, int times) {
  double seconds = 0;
  for (int message = 0; message < times; ++message) seconds += exchange_once(bytes);
  return seconds;
}

double Transfers::one_way(double bytes, int times) {
  double seconds = 0;
  for (int message = 0; message < times; ++message) seconds += one_way_once(bytes);
  return seconds;
}

double Transfers::follow_on(double bytes, int times) {
  const std::vector<std::pair<double, double>>& extra = link_.follow_on_extra;
  // Beyond the largest size measured, in proportion to the bytes: a share of them serialized.
  const double each = extra.empty() ? 0
                      : bytes > extra.back().first
                          ? extra.back().second * bytes / extra.back().first
                          : interpolated(extra, bytes);
  return exchange(bytes, times) + times * each;
}

double Transfers::steps(double bytes, int count) {
  return count > 0 ? exchange(bytes) + follow_on(bytes, count - 1) : 0;
}

double Transfers::exchange_once(double bytes) {
  if (!link_.after_idle) return link_.exchange.seconds(bytes);
  const double fast = std::min(bytes, tokens_);
  tokens_ -= fast;
  const double latency = after_idle_ ? first_latency_ : link_.exchange.alpha;
  after_idle_ = false;
  const double excess = bytes - fast;
  const double beyond =
      excess > 0 ? std::max(0.0, link_.exchange.seconds(excess) - link_.exchange.seconds(0)) : 0;
  return latency + fast * link_.after_idle->beta + beyond;
}

double Transfers::one_way_once(double bytes) {
  tokens_ -= std::min(bytes, tokens_);
  after_idle_ = false;
  return link_.one_way_seconds(bytes);
}

algorithms::Traffic priced_traffic(const algorithms::AlgorithmRow& row,
                                   std::string_view aggregation) {
  const algorithms::Traffic traffic = algorithms::traffic_of(row, aggregation);
  if (traffic == algorithms::Traffic::unstated) {
    throw std::invalid_argument(fmt::format(
        "cost model: no formula for --algo {}: its row states no traffic (AlgorithmRow::traffic)",
        row.name));
  }
  return traffic;
}

algorithms::Traffic traffic_of(const Exchange& e) {
  const algorithms::AlgorithmRow* row = algorithms::algorithm_table().lookup(e.algo);
  if (row == nullptr) {
    throw std::invalid_argument(
        fmt::format("cost model: no formula for --algo {}: not an algorithm of this build ({})",
                    e.algo, algorithms::algorithm_table().choices()));
  }
  return priced_traffic(*row, e.aggregation);
}

double communication_seconds(const Exchange& e, const Link& link, double idle_seconds) {
  using algorithms::Traffic;
  const int p = e.workers;
  if (p <= 1) return 0;
  const Traffic traffic = traffic_of(e);
  const double d = e.parameters;
  Transfers transfers(link, idle_seconds);
  switch (traffic) {
    case Traffic::bucketed_allreduce: {
      const double bucket = bucket_bytes(e);
      double seconds = 0;
      for (int b = 0; b < e.buckets; ++b) {
        seconds += allreduce_seconds(tuned_allreduce(p, bucket), p, bucket, transfers);
      }
      return seconds;
    }
    case Traffic::allgathered_sets: {
      // The sizes first (8 bytes a rank, latency alone), then the sets.
      const double set = set_bytes(e);
      const double sizes = transfers.exchange(8, ceil_log2(p));
      return sizes + allgatherv_seconds(tuned_allgatherv(p, set), p, set, transfers);
    }
    case Traffic::gtopk_rounds: {
      // ⌊log2 P⌋ exchanges, each followed by a merge; beyond a power of two, the fold in (merged
      // with the guest's set) and the fold out go one way each.
      const int folds = std::has_single_bit(static_cast<unsigned>(p)) ? 0 : 1;
      const double fold_in = transfers.one_way(set_bytes(e), folds);
      const double rounds = transfers.exchange(set_bytes(e), floor_log2(p));
      const double merges = (floor_log2(p) + folds) * e.merge_seconds;
      return fold_in + rounds + merges + transfers.one_way(set_bytes(e), folds);
    }
    // The gossip rows send their messages of a round at once: one latency for all of them.
    case Traffic::allgathered_signs: {
      const double block = sign_bytes(e);
      return allgather_seconds(tuned_allgather(p, block), p, block, transfers);
    }
    case Traffic::allgathered_levels: {
      const double block = level_bytes(e);
      return allgather_seconds(tuned_allgather(p, block), p, block, transfers);
    }
    case Traffic::allreduced_factors: {
      const double half = factor_bytes(e);
      return 2 * allreduce_seconds(tuned_allreduce(p, half), p, half, transfers);
    }
    case Traffic::push_to_peers:
      return transfers.exchange(e.peers_per_iter * 4 * (d + 1));
    case Traffic::neighbour_average:
      return transfers.exchange(dpsgd_neighbours(e) * 4 * d);
    case Traffic::pairwise_average:
      return transfers.exchange(4 * d);
    case Traffic::unstated:
    case Traffic::of_aggregation:
      break;  // traffic_of() resolves these or refuses the row
  }
  throw std::logic_error("cost model: traffic left unresolved for --algo " + e.algo);
}

std::string priced_as(const Exchange& e) {
  if (e.workers <= 1) return "";
  switch (traffic_of(e)) {
    case algorithms::Traffic::bucketed_allreduce:
      return fmt::format("allreduce {}", name(tuned_allreduce(e.workers, bucket_bytes(e))));
    case algorithms::Traffic::allgathered_sets:
      return fmt::format("allgatherv {}", name(tuned_allgatherv(e.workers, set_bytes(e))));
    case algorithms::Traffic::allgathered_signs:
      return fmt::format("allgather {}", name(tuned_allgather(e.workers, sign_bytes(e))));
    case algorithms::Traffic::allgathered_levels:
      return fmt::format("allgather {}", name(tuned_allgather(e.workers, level_bytes(e))));
    case algorithms::Traffic::allreduced_factors:
      return fmt::format("2 allreduce {}", name(tuned_allreduce(e.workers, factor_bytes(e))));
    default:
      return "";
  }
}

bool communicates_on_a_thread(const Exchange& e) {
  // An algorithm not in this build's table: pricing its communication refuses it.
  const algorithms::AlgorithmRow* row = algorithms::algorithm_table().lookup(e.algo);
  if (row == nullptr) return false;
  switch (row->overlap) {
    case algorithms::Overlap::none:
      return false;
    case algorithms::Overlap::with_backward:
      return e.bucketed;
    case algorithms::Overlap::with_step:
      return true;
  }
  return false;
}

double exposed_seconds(const Exchange& e, const Link& link, double computing, double backward) {
  if (!communicates_on_a_thread(e)) return communication_seconds(e, link, computing);
  if (algorithms::find_algorithm(e.algo).overlap != algorithms::Overlap::with_backward) {
    // A thread of its own communicates while the step computes: the link does not idle then.
    return std::max(0.0, communication_seconds(e, link) - computing);
  }
  // Buckets during backward: what backward does not cover, but at least the last bucket, which
  // goes after it. One bucket goes after backward alone, the link idle through the computation.
  if (e.buckets <= 1) return communication_seconds(e, link, computing);
  Exchange last = e;
  last.parameters = e.parameters / e.buckets;
  last.buckets = 1;
  return std::max(communication_seconds(last, link), communication_seconds(e, link) - backward);
}

}  // namespace commsgd::report
