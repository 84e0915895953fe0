#include "analysis/report/cost_model.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>

#include "analysis/report/open_mpi_tuned.hpp"

namespace commsgd::report {
namespace {

// Every gradient entry the sparse aggregations move is a float32 value and a uint32 index.
constexpr double kSparseEntryBytes = 8;

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
  return kSparseEntryBytes * e.entries;
}

int dpsgd_neighbours(const Exchange& e) {
  if (e.topology == "ring") return std::min(2, e.workers - 1);
  if (e.topology == "complete") return e.workers - 1;
  return 1;  // bipartite-exponential: one partner per iteration
}

}  // namespace

Link plain_link(double alpha, double beta) {
  Link link;
  link.exchange.alpha = alpha;
  link.exchange.beta = beta;
  return link;
}

double MessageTime::seconds(double bytes) const {
  if (measured.empty() || bytes > measured.back().first) return alpha + beta * bytes;
  if (bytes <= measured.front().first) return measured.front().second;
  const auto above = std::lower_bound(measured.begin(), measured.end(), bytes,
                                      [](const auto& point, double b) { return point.first < b; });
  const auto below = above - 1;
  const double share = (bytes - below->first) / (above->first - below->first);
  return below->second + share * (above->second - below->second);
}

double communication_seconds(const Exchange& e, const Link& link) {
  const int p = e.workers;
  if (p <= 1) return 0;
  const double d = e.parameters;
  if (e.algo == "dense") {
    const double bucket = bucket_bytes(e);
    return e.buckets * allreduce_seconds(tuned_allreduce(p, bucket), p, bucket, link);
  }
  if (e.aggregation == "allgather") {
    // The sizes first (8 bytes a rank, latency alone), then the sets.
    const double set = set_bytes(e);
    return ceil_log2(p) * link.message_seconds(8) +
           allgatherv_seconds(tuned_allgatherv(p, set), p, set, link);
  }
  if (e.aggregation == "gtopk") {
    // ⌊log2 P⌋ exchanges; beyond a power of two, the fold in and the fold out go one way each.
    const double folds = std::has_single_bit(static_cast<unsigned>(p)) ? 0 : 2;
    return floor_log2(p) * link.message_seconds(set_bytes(e)) +
           folds * link.one_way_seconds(set_bytes(e));
  }
  // The gossip rows send their messages of a round at once: one latency for all of them.
  if (e.algo == "sgp" || e.algo == "osgp") {
    return link.message_seconds(e.peers_per_iter * 4 * (d + 1));
  }
  if (e.algo == "dpsgd") return link.message_seconds(dpsgd_neighbours(e) * 4 * d);
  if (e.algo == "adpsgd") return link.message_seconds(4 * d);
  throw std::invalid_argument("cost model: no formula for --algo " + e.algo);
}

std::string priced_as(const Exchange& e) {
  if (e.workers <= 1) return "";
  if (e.algo == "dense") {
    return fmt::format("allreduce {}", name(tuned_allreduce(e.workers, bucket_bytes(e))));
  }
  if (e.aggregation == "allgather") {
    return fmt::format("allgatherv {}", name(tuned_allgatherv(e.workers, set_bytes(e))));
  }
  return "";
}

bool communicates_on_a_thread(const Exchange& e) {
  return e.algo == "osgp" || e.algo == "adpsgd" || (e.algo == "dense" && e.buckets > 1);
}

double exposed_seconds(const Exchange& e, const Link& link, double computing, double backward) {
  const double all = communication_seconds(e, link);
  if (!communicates_on_a_thread(e)) return all;
  if (e.algo == "dense") {
    Exchange last = e;
    last.parameters = e.parameters / e.buckets;
    last.buckets = 1;
    return std::max(communication_seconds(last, link), all - backward);
  }
  return std::max(0.0, all - computing);
}

}  // namespace commsgd::report
