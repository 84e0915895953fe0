// sign-bits: single-thread time of the compressed family's codes, the sign kernels
// (kernels/sign_bits.hpp) and QSGD's (kernels/qsgd.hpp, 4 levels in buckets of 512), on N(0,1)
// data, against a memory pass over what each must touch, interleaved per repeat so that all see
// the same machine state:
// - pack_signs reads x (4d bytes) and writes d/8: against one read of x (count_abs_greater, the
//   floor of the selector benchmark);
// - add_signs reads d/8 and reads and writes the decoded floats: against scale(out, 1), which
//   reads and writes them once;
// - l1_norm reads x: against the same one read;
// - qsgd_encode reads x twice (the norm, then the levels) and writes d/2 bytes: against one read;
// - qsgd_decode reads d/2 bytes and reads and writes the floats: against scale(out, 1);
// - draws: QSGD's random numbers alone, one an entry (kernels/qsgd_draw.hpp), which no encoding
//   with its draws can go below: qsgd_encode against them too;
// - qsgd_encode and qsgd_decode on each instruction set they have a version for here (AVX-512,
//   AVX2, the portable loops; kernels/qsgd.hpp), the same codes and sums from each: against
//   their passes, for the nodes that have only the narrower ones.
// Target (issue "The baselines every comparison needs"): pack and decode within 2x of their pass.
#include "kernels/sign_bits.hpp"

#include <fmt/core.h>

#include <CLI/CLI.hpp>
#include <map>
#include <nlohmann/json.hpp>

#include "algorithms/stopwatch.hpp"
#include "kernels/qsgd.hpp"
#include "kernels/qsgd_draw.hpp"
#include "kernels/simd_path.hpp"
#include "kernels/threshold.hpp"
#include "kernels/vector_ops.hpp"
#include "tests/bench/benchmarks.hpp"
#include "tests/bench/machine.hpp"
#include "tests/bench/selection_bench.hpp"

namespace commsgd::bench {
namespace {

constexpr unsigned kQsgdLevels = 4;
constexpr std::size_t kQsgdBucket = 512;

// QSGD's draws for entries 0 .. d − 1 (d rounded down to blocks), counted below one half, as the
// encoder draws them at 4 levels: a block of 16 words' streams, started by the hash and stepped
// 16 times (a word's fields), and nothing else; built for AVX-512 and AVX2 as the encoder is.
#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
std::size_t
draws_below_half(std::size_t d) {
  constexpr std::uint32_t kWords = 16, kFields = 16;
  std::uint32_t below = 0;  // 32-bit lanes throughout, as the encoder's (d < 2^32)
  for (std::uint32_t i = 0; i + kWords * kFields <= d; i += kWords * kFields) {
    std::uint32_t state[kWords];
    for (std::uint32_t w = 0; w < kWords; ++w) state[w] = kernels::qsgd_draw::start(1, i + w);
    for (std::uint32_t f = 0; f < kFields; ++f) {
      for (std::uint32_t w = 0; w < kWords; ++w) {
        below += kernels::qsgd_draw::uniform(state[w]) < 0.5f;
        state[w] = kernels::qsgd_draw::next(state[w]);
      }
    }
  }
  return below;
}

struct SignSettings {
  std::vector<std::size_t> sizes = {1'000'000, 25'000'000};
  int repeats = 7;
  std::string db = "results/bench.sqlite";
};

// The candidate that runs QSGD's `step` (encode, decode) on a narrower path than the widest.
std::string qsgd_on(const char* step, kernels::SimdPath path) {
  return fmt::format("qsgd_{}_{}", step, kernels::name_of(path));
}

void run(const SignSettings& s) {
  const std::vector<kernels::SimdPath> paths = kernels::qsgd_simd_paths();
  const kernels::SimdPath widest = paths.back();
  const std::vector<kernels::SimdPath> narrower(paths.begin(), paths.end() - 1);
  std::vector<record::BenchRow> rows;
  std::string path_lines;  // printed under the table
  fmt::print(
      "{:>10} | {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} | {:>9} {:>9} {:>9} {:>9} {:>9} "
      "{:>9}\n",
      "d", "read", "pack", "read_write", "decode", "l1", "draws", "q_encode", "q_decode", "pack/rd",
      "decode/rw", "l1/rd", "q_enc/rd", "q_enc/drw", "q_dec/rw");
  for (const std::size_t d : s.sizes) {
    const std::vector<float> x = normal_data(d);
    std::vector<std::uint64_t> bits(kernels::sign_words(d));
    std::vector<float> out(d, 0.0f);
    const std::size_t buckets = (d + kQsgdBucket - 1) / kQsgdBucket;
    std::vector<std::uint64_t> code(kernels::qsgd_code_words(d, kQsgdBucket, kQsgdLevels));
    std::vector<float> norms(buckets);
    std::size_t sink = 0;
    double l1 = 0;
    std::vector<Candidate> candidates = {
        {"read", [&] { sink += kernels::count_abs_greater(x, 1.0f); }, {}},
        {"pack", [&] { kernels::pack_signs(x, bits); }, {}},
        {"read_write", [&] { kernels::scale(out, 1.0f); }, {}},
        {"decode", [&] { kernels::add_signs(bits, 0, 1e-3f, out); }, {}},
        {"l1", [&] { l1 += kernels::l1_norm(x); }, {}},
        {"draws", [&] { sink += draws_below_half(d); }, {}},
        {"qsgd_encode",
         [&] {
           kernels::use_qsgd_simd_path(widest);
           kernels::qsgd_encode_buckets(x, kQsgdBucket, kQsgdLevels, 1, code, norms);
         },
         {}},
        {"qsgd_decode",
         [&] {
           kernels::use_qsgd_simd_path(widest);
           kernels::qsgd_decode_add_buckets(code, norms, kQsgdBucket, kQsgdLevels, 1e-3f, out);
         },
         {}}};
    for (const kernels::SimdPath path : narrower) {
      candidates.push_back({qsgd_on("encode", path),
                            [&, path] {
                              kernels::use_qsgd_simd_path(path);
                              kernels::qsgd_encode_buckets(x, kQsgdBucket, kQsgdLevels, 1, code,
                                                           norms);
                            },
                            {}});
      candidates.push_back({qsgd_on("decode", path),
                            [&, path] {
                              kernels::use_qsgd_simd_path(path);
                              kernels::qsgd_decode_add_buckets(code, norms, kQsgdBucket,
                                                               kQsgdLevels, 1e-3f, out);
                            },
                            {}});
    }
    for (int r = 0; r < s.repeats; ++r) {
      for (Candidate& c : candidates) {
        const algorithms::Stopwatch watch;
        c.run();
        c.seconds.push_back(watch.seconds());
      }
    }
    if (sink == 0 && l1 == 0) fmt::print("(no data)\n");  // keeps the results in use
    kernels::use_qsgd_simd_path(widest);
    const nlohmann::json params = {{"d", d}, {"threads", 1}, {"repeats", s.repeats}};
    std::map<std::string, double> ms;
    for (const Candidate& c : candidates) {
      rows.push_back(bench_row("sign_bits", c.name, params, median(c.seconds), "s"));
      ms[c.name] = 1e3 * median(c.seconds);
    }
    const double pack = ms["pack"] / ms["read"], decode = ms["decode"] / ms["read_write"],
                 l1_ratio = ms["l1"] / ms["read"], q_encode = ms["qsgd_encode"] / ms["read"],
                 q_encode_draws = ms["qsgd_encode"] / ms["draws"],
                 q_decode = ms["qsgd_decode"] / ms["read_write"];
    rows.push_back(bench_row("sign_bits", "pack_over_read", params, pack, "ratio"));
    rows.push_back(bench_row("sign_bits", "decode_over_read_write", params, decode, "ratio"));
    rows.push_back(bench_row("sign_bits", "l1_over_read", params, l1_ratio, "ratio"));
    rows.push_back(bench_row("sign_bits", "qsgd_encode_over_read", params, q_encode, "ratio"));
    rows.push_back(
        bench_row("sign_bits", "qsgd_encode_over_draws", params, q_encode_draws, "ratio"));
    rows.push_back(
        bench_row("sign_bits", "qsgd_decode_over_read_write", params, q_decode, "ratio"));
    for (const kernels::SimdPath path : paths) {
      nlohmann::json on = params;
      on["qsgd_path"] = kernels::name_of(path);
      const double encode_ms = path == widest ? ms["qsgd_encode"] : ms[qsgd_on("encode", path)];
      const double decode_ms = path == widest ? ms["qsgd_decode"] : ms[qsgd_on("decode", path)];
      rows.push_back(bench_row("sign_bits", "qsgd_encode_path_over_read", on,
                               encode_ms / ms["read"], "ratio"));
      rows.push_back(bench_row("sign_bits", "qsgd_decode_path_over_read_write", on,
                               decode_ms / ms["read_write"], "ratio"));
      path_lines += fmt::format(
          "{:>10} | QSGD on {}: encode {:.3f} ms, {:.2f} reads; decode {:.3f} ms, {:.2f} "
          "read-writes\n",
          d, kernels::name_of(path), encode_ms, encode_ms / ms["read"], decode_ms,
          decode_ms / ms["read_write"]);
    }
    fmt::print(
        "{:>10} | {:>9.3f} {:>9.3f} {:>9.3f} {:>9.3f} {:>9.3f} {:>9.3f} {:>9.3f} {:>9.3f} | "
        "{:>9.2f} {:>9.2f} {:>9.2f} {:>9.2f} {:>9.2f} {:>9.2f}\n",
        d, ms["read"], ms["pack"], ms["read_write"], ms["decode"], ms["l1"], ms["draws"],
        ms["qsgd_encode"], ms["qsgd_decode"], pack, decode, l1_ratio, q_encode, q_encode_draws,
        q_decode);
  }
  fmt::print("{}times in ms, median of {} interleaved repeats, one thread\n", path_lines,
             s.repeats);
  record_bench(s.db, rows);
}

}  // namespace

void add_sign_bits(CLI::App& app) {
  auto settings = std::make_shared<SignSettings>();
  CLI::App* cmd = app.add_subcommand(
      "sign-bits",
      "Sign and QSGD codes, encoding and decoding (signsgd, ef-signsgd, qsgd), against a memory "
      "pass");
  cmd->add_option("--sizes", settings->sizes, "Gradient entries d")->capture_default_str();
  cmd->add_option("--repeats", settings->repeats, "Interleaved repeats")->capture_default_str();
  cmd->add_option("--db", settings->db, "SQLite file for the bench table")->capture_default_str();
  cmd->callback([settings] { run(*settings); });
}

}  // namespace commsgd::bench
