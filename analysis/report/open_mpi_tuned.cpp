#include "analysis/report/open_mpi_tuned.hpp"

#include <algorithm>
#include <bit>
#include <initializer_list>
#include <utility>

namespace commsgd::report {
namespace {

int ceil_log2(int p) {
  return p <= 1 ? 0 : std::bit_width(static_cast<unsigned>(p - 1));
}
int floor_log2(int p) {
  return std::bit_width(static_cast<unsigned>(p)) - 1;
}

// One row of a decision table: below `below` bytes, `algorithm`; the last row's bound is unused.
template <class Algorithm>
using Rule = std::pair<double, Algorithm>;

template <class Algorithm>
Algorithm first_below(double bytes, std::initializer_list<Rule<Algorithm>> rules) {
  for (const auto& [below, algorithm] : rules) {
    if (bytes < below) return algorithm;
  }
  return (rules.end() - 1)->second;
}

constexpr double kAlways = 0;  // the bound of a table's last row, never compared

}  // namespace

AllreduceAlgorithm tuned_allreduce(int ranks, double bytes) {
  using A = AllreduceAlgorithm;
  // ompi_coll_tuned_allreduce_intra_dec_fixed, commutative operations. Its "segmented ring" gets
  // no segment size from these rules, and with none it runs the ring.
  if (ranks < 4) {
    return first_below<A>(bytes, {{8, A::ring},
                                  {4096, A::recursive_doubling},
                                  {8192, A::ring},
                                  {16384, A::recursive_doubling},
                                  {65536, A::ring},
                                  {262144, A::ring},
                                  {kAlways, A::rabenseifner}});
  }
  if (ranks < 8) {
    return first_below<A>(
        bytes, {{16, A::ring}, {8192, A::recursive_doubling}, {kAlways, A::rabenseifner}});
  }
  if (ranks < 16) {
    return first_below<A>(bytes, {{8192, A::recursive_doubling}, {kAlways, A::rabenseifner}});
  }
  if (ranks < 32) {
    return first_below<A>(
        bytes, {{64, A::ring}, {4096, A::recursive_doubling}, {kAlways, A::rabenseifner}});
  }
  if (ranks < 64) return first_below<A>(bytes, {{128, A::ring}, {kAlways, A::rabenseifner}});
  if (ranks < 128) {
    return first_below<A>(bytes, {{262144, A::recursive_doubling}, {kAlways, A::rabenseifner}});
  }
  if (ranks < 256) {
    return first_below<A>(
        bytes,
        {{131072, A::nonoverlapping}, {262144, A::recursive_doubling}, {kAlways, A::rabenseifner}});
  }
  if (ranks < 512) {
    return first_below<A>(bytes, {{4096, A::nonoverlapping}, {kAlways, A::rabenseifner}});
  }
  if (ranks < 2048) {
    return first_below<A>(
        bytes,
        {{2048, A::nonoverlapping}, {16384, A::recursive_doubling}, {kAlways, A::rabenseifner}});
  }
  if (ranks < 4096) {
    return first_below<A>(bytes, {{2048, A::nonoverlapping},
                                  {4096, A::ring},
                                  {16384, A::recursive_doubling},
                                  {kAlways, A::rabenseifner}});
  }
  return first_below<A>(bytes, {{2048, A::nonoverlapping},
                                {16384, A::ring},
                                {32768, A::recursive_doubling},
                                {kAlways, A::rabenseifner}});
}

AllgathervAlgorithm tuned_allgatherv(int ranks, double bytes_per_rank) {
  using A = AllgathervAlgorithm;
  const double b = bytes_per_rank;  // ompi_coll_tuned_allgatherv_intra_dec_fixed
  if (ranks == 2) {
    return first_below<A>(
        b, {{2048, A::ring}, {4096, A::two_procs}, {8192, A::ring}, {kAlways, A::two_procs}});
  }
  if (ranks < 8) {
    return first_below<A>(b, {{256, A::gather_broadcast},
                              {4096, A::neighbor_exchange},
                              {8192, A::ring},
                              {16384, A::neighbor_exchange},
                              {262144, A::bruck},
                              {kAlways, A::neighbor_exchange}});
  }
  if (ranks < 16) return first_below<A>(b, {{1024, A::gather_broadcast}, {kAlways, A::bruck}});
  if (ranks < 32) {
    return first_below<A>(b, {{128, A::gather_broadcast}, {262144, A::bruck}, {kAlways, A::ring}});
  }
  if (ranks < 64) {
    return first_below<A>(b, {{256, A::gather_broadcast}, {8192, A::bruck}, {kAlways, A::ring}});
  }
  if (ranks < 128) {
    return first_below<A>(b, {{256, A::gather_broadcast}, {4096, A::bruck}, {kAlways, A::ring}});
  }
  if (ranks < 256) {
    return first_below<A>(b, {{1024, A::bruck}, {65536, A::neighbor_exchange}, {kAlways, A::ring}});
  }
  if (ranks < 512) return first_below<A>(b, {{1024, A::bruck}, {kAlways, A::ring}});
  if (ranks < 1024) {
    return first_below<A>(b, {{512, A::bruck},
                              {1024, A::gather_broadcast},
                              {4096, A::bruck},
                              {1048576, A::neighbor_exchange},
                              {kAlways, A::ring}});
  }
  return first_below<A>(b, {{4096, A::bruck}, {kAlways, A::neighbor_exchange}});
}

AllgatherAlgorithm tuned_allgather(int ranks, double bytes_per_rank) {
  using A = AllgatherAlgorithm;
  const double b = bytes_per_rank;  // ompi_coll_tuned_allgather_intra_dec_fixed
  if (ranks == 2) return A::two_procs;
  if (ranks < 32) return A::recursive_doubling;
  if (ranks < 64) {
    return first_below<A>(
        b, {{1024, A::recursive_doubling}, {65536, A::neighbor_exchange}, {kAlways, A::ring}});
  }
  if (ranks < 128) {
    return first_below<A>(
        b, {{512, A::recursive_doubling}, {65536, A::neighbor_exchange}, {kAlways, A::ring}});
  }
  if (ranks < 256) {
    return first_below<A>(b, {{512, A::recursive_doubling},
                              {131072, A::neighbor_exchange},
                              {524288, A::ring},
                              {1048576, A::neighbor_exchange},
                              {kAlways, A::ring}});
  }
  if (ranks < 512) {
    return first_below<A>(b, {{32, A::recursive_doubling},
                              {128, A::bruck},
                              {1024, A::recursive_doubling},
                              {131072, A::neighbor_exchange},
                              {524288, A::ring},
                              {1048576, A::neighbor_exchange},
                              {kAlways, A::ring}});
  }
  if (ranks < 1024) {
    return first_below<A>(b, {{64, A::recursive_doubling},
                              {256, A::bruck},
                              {2048, A::recursive_doubling},
                              {kAlways, A::neighbor_exchange}});
  }
  if (ranks < 2048) {
    return first_below<A>(b, {{4, A::recursive_doubling},
                              {8, A::bruck},
                              {16, A::recursive_doubling},
                              {32, A::bruck},
                              {256, A::recursive_doubling},
                              {512, A::bruck},
                              {4096, A::recursive_doubling},
                              {kAlways, A::neighbor_exchange}});
  }
  if (ranks < 4096) {
    return first_below<A>(b, {{32, A::bruck},
                              {128, A::recursive_doubling},
                              {512, A::bruck},
                              {4096, A::recursive_doubling},
                              {kAlways, A::neighbor_exchange}});
  }
  return first_below<A>(b, {{2, A::recursive_doubling},
                            {8, A::bruck},
                            {16, A::recursive_doubling},
                            {512, A::bruck},
                            {4096, A::recursive_doubling},
                            {kAlways, A::neighbor_exchange}});
}

double allreduce_seconds(AllreduceAlgorithm algorithm, int p, double n, Transfers& link) {
  if (p <= 1) return 0;
  // Ranks beyond the largest power of two first hand their vector to a partner and get the
  // result back at the end: two more steps of the whole vector, one way each.
  const int folds = std::has_single_bit(static_cast<unsigned>(p)) ? 0 : 1;
  switch (algorithm) {
    case AllreduceAlgorithm::basic_linear:  // rank 0 receives, then sends, one vector per rank
      return link.one_way(n, 2 * (p - 1));
    case AllreduceAlgorithm::nonoverlapping:  // down a tree and back up, one way at a time
      return link.one_way(n, 2 * ceil_log2(p));
    case AllreduceAlgorithm::recursive_doubling:
      return link.one_way(n, folds) + link.steps(n, floor_log2(p)) + link.one_way(n, folds);
    case AllreduceAlgorithm::ring:
      return link.steps(n / p, 2 * (p - 1));
    case AllreduceAlgorithm::rabenseifner: {
      // Halving exchanges n/2, n/4, ... down to n/q; doubling the same back up.
      double seconds = link.one_way(n, folds) + link.exchange(n / 2);
      for (int step = 2; step <= floor_log2(p); ++step) seconds += link.follow_on(n / (1 << step));
      for (int step = floor_log2(p); step >= 1; --step) seconds += link.follow_on(n / (1 << step));
      return seconds + link.one_way(n, folds);
    }
  }
  return 0;
}

double allgatherv_seconds(AllgathervAlgorithm algorithm, int p, double m, Transfers& link) {
  if (p <= 1) return 0;
  switch (algorithm) {
    case AllgathervAlgorithm::gather_broadcast:
      // rank 0 receives p − 1 blocks, then broadcasts all p along a binomial tree
      return link.one_way(m, p - 1) + link.one_way(p * m, ceil_log2(p));
    case AllgathervAlgorithm::bruck: {
      // step i passes on the 2^i blocks gathered so far (the last one what is still missing)
      double seconds = link.exchange(m);
      for (int have = 2; have < p; have *= 2) {
        seconds += link.follow_on(std::min(have, p - have) * m);
      }
      return seconds;
    }
    case AllgathervAlgorithm::ring:
      return link.steps(m, p - 1);
    case AllgathervAlgorithm::neighbor_exchange:  // one block, then two a step; odd P: the ring
      if (p % 2 != 0) return link.steps(m, p - 1);
      return link.exchange(m) + link.follow_on(2 * m, p / 2 - 1);
    case AllgathervAlgorithm::two_procs:
      return link.exchange(m);
  }
  return 0;
}

double allgather_seconds(AllgatherAlgorithm algorithm, int p, double m, Transfers& link) {
  if (p <= 1) return 0;
  // The others move blocks as their allgatherv namesakes do.
  switch (algorithm) {
    case AllgatherAlgorithm::recursive_doubling: {
      // Open MPI runs Bruck's instead when P is not a power of two.
      if (!std::has_single_bit(static_cast<unsigned>(p))) {
        return allgatherv_seconds(AllgathervAlgorithm::bruck, p, m, link);
      }
      double seconds = link.exchange(m);  // step i exchanges the 2^i blocks gathered so far
      for (int have = 2; have < p; have *= 2) seconds += link.follow_on(have * m);
      return seconds;
    }
    case AllgatherAlgorithm::bruck:
      return allgatherv_seconds(AllgathervAlgorithm::bruck, p, m, link);
    case AllgatherAlgorithm::ring:
      return allgatherv_seconds(AllgathervAlgorithm::ring, p, m, link);
    case AllgatherAlgorithm::neighbor_exchange:
      return allgatherv_seconds(AllgathervAlgorithm::neighbor_exchange, p, m, link);
    case AllgatherAlgorithm::two_procs:
      return allgatherv_seconds(AllgathervAlgorithm::two_procs, p, m, link);
  }
  return 0;
}

std::string_view name(AllreduceAlgorithm algorithm) {
  switch (algorithm) {
    case AllreduceAlgorithm::basic_linear:
      return "basic_linear";
    case AllreduceAlgorithm::nonoverlapping:
      return "nonoverlapping";
    case AllreduceAlgorithm::recursive_doubling:
      return "recursive_doubling";
    case AllreduceAlgorithm::ring:
      return "ring";
    case AllreduceAlgorithm::rabenseifner:
      return "rabenseifner";
  }
  return "";
}

std::string_view name(AllgathervAlgorithm algorithm) {
  switch (algorithm) {
    case AllgathervAlgorithm::gather_broadcast:
      return "gather_broadcast";
    case AllgathervAlgorithm::bruck:
      return "bruck";
    case AllgathervAlgorithm::ring:
      return "ring";
    case AllgathervAlgorithm::neighbor_exchange:
      return "neighbor_exchange";
    case AllgathervAlgorithm::two_procs:
      return "two_procs";
  }
  return "";
}

std::string_view name(AllgatherAlgorithm algorithm) {
  switch (algorithm) {
    case AllgatherAlgorithm::recursive_doubling:
      return "recursive_doubling";
    case AllgatherAlgorithm::bruck:
      return "bruck";
    case AllgatherAlgorithm::ring:
      return "ring";
    case AllgatherAlgorithm::neighbor_exchange:
      return "neighbor_exchange";
    case AllgatherAlgorithm::two_procs:
      return "two_procs";
  }
  return "";
}

}  // namespace commsgd::report
