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

double allreduce_seconds(AllreduceAlgorithm algorithm, int p, double n, const Link& link) {
  if (p <= 1) return 0;
  const auto message = [&](double bytes) { return link.message_seconds(bytes); };
  const auto one_way = [&](double bytes) { return link.one_way_seconds(bytes); };
  const bool power_of_two = std::has_single_bit(static_cast<unsigned>(p));
  // Ranks beyond the largest power of two first hand their vector to a partner and get the
  // result back at the end: two more steps of the whole vector, one way each.
  const double fold = power_of_two ? 0 : 2 * one_way(n);
  switch (algorithm) {
    case AllreduceAlgorithm::basic_linear:
      return 2.0 * (p - 1) * one_way(n);  // rank 0 receives, then sends, one vector per rank
    case AllreduceAlgorithm::nonoverlapping:
      return 2.0 * ceil_log2(p) * one_way(n);  // down a tree and back up, one way at a time
    case AllreduceAlgorithm::recursive_doubling:
      return floor_log2(p) * message(n) + fold;
    case AllreduceAlgorithm::ring:
      return 2.0 * (p - 1) * message(n / p);
    case AllreduceAlgorithm::rabenseifner: {
      // Halving exchanges n/2, n/4, ... down to n/q; doubling the same back up.
      double seconds = fold;
      for (int step = 1; step <= floor_log2(p); ++step) seconds += 2 * message(n / (1 << step));
      return seconds;
    }
  }
  return 0;
}

double allgatherv_seconds(AllgathervAlgorithm algorithm, int p, double m, const Link& link) {
  if (p <= 1) return 0;
  const auto message = [&](double bytes) { return link.message_seconds(bytes); };
  const auto one_way = [&](double bytes) { return link.one_way_seconds(bytes); };
  switch (algorithm) {
    case AllgathervAlgorithm::gather_broadcast:
      // rank 0 receives p − 1 blocks, then broadcasts all p along a binomial tree
      return (p - 1) * one_way(m) + ceil_log2(p) * one_way(p * m);
    case AllgathervAlgorithm::bruck: {
      // step i passes on the 2^i blocks gathered so far (the last one what is still missing)
      double seconds = 0;
      for (int have = 1; have < p; have *= 2) seconds += message(std::min(have, p - have) * m);
      return seconds;
    }
    case AllgathervAlgorithm::ring:
      return (p - 1) * message(m);
    case AllgathervAlgorithm::neighbor_exchange:
      if (p % 2 != 0) return (p - 1) * message(m);       // Open MPI runs the ring
      return message(m) + (p / 2 - 1) * message(2 * m);  // one block, then two a step
    case AllgathervAlgorithm::two_procs:
      return message(m);
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

}  // namespace commsgd::report
