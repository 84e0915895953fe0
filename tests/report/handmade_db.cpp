#include "tests/report/handmade_db.hpp"

#include <fmt/format.h>

#include <vector>

#include "analysis/record/run_database.hpp"

namespace commsgd::testing {
namespace {

using record::BenchRow;
using record::EpochRow;
using record::RunDatabase;
using record::RunInfo;
using record::StepRow;

RunInfo run(const char* id, const char* algo, int workers, const char* network = "local") {
  RunInfo r;
  r.id = id;
  r.algo = algo;
  if (std::string(algo) != "dense") {
    r.selector = "exact";
    r.aggregation = std::string(algo) == "gtopk" ? "gtopk" : "allgather";
    r.density = 0.01;
  }
  r.topology = "";
  r.model = "mlp";
  r.dataset = "synthetic";
  r.workers = workers;
  r.network = network;
  r.backend = "mpi";
  r.device = "cpu";
  r.batch_size = 10;
  r.lr = 0.1;
  r.epochs = 3;
  r.git_revision = "test";
  r.host = "test";
  return r;
}

// A --log-every window: seconds per iteration in each phase; total = the phases + `other`.
StepRow window(std::int64_t step, double data, double fb, double select, double communicate,
               double wait, double update, double other, double bytes) {
  StepRow s;
  s.step = step;
  s.epoch = static_cast<int>(step / 10);
  s.loss = {1.0, 1.0};
  s.data_s = {data, data};
  s.forward_backward_s = {fb, fb};
  s.select_s = {select, select};
  s.communicate_s = {communicate, communicate};
  s.wait_s = {wait, wait};
  s.update_s = {update, update};
  const double total = data + fb + select + communicate + wait + update + other;
  s.total_s = {total, 1.5 * total};
  s.bytes_sent = {bytes, 2 * bytes};
  s.bytes_received = {3 * bytes, 4 * bytes};
  s.density = {1.0, 1.0};
  return s;
}

// Only the first window pays the warm-up (total 1 s); the steady state is the rest.
std::vector<StepRow> windows(double steady_total_1, double steady_total_2, double bytes) {
  return {window(9, 0, 1.0, 0, 0, 0, 0, 0, bytes),
          window(19, 0, steady_total_1, 0, 0, 0, 0, 0, bytes),
          window(29, 0, steady_total_2, 0, 0, 0, 0, 0, bytes)};
}

EpochRow epoch(int e, double val_top1, double wall_seconds) {
  EpochRow row;
  row.epoch = e;
  row.train_loss = 1.0 - val_top1;
  row.train_acc = val_top1;
  row.val_loss = 2.0 - val_top1;
  row.val_top1 = val_top1;
  row.wall_seconds = wall_seconds;
  return row;
}

void add_run(RunDatabase& db, const RunInfo& r, const std::vector<StepRow>& steps,
             const std::vector<EpochRow>& epochs) {
  db.begin_run(r);
  db.add_steps(r.id, steps);
  for (const EpochRow& e : epochs) db.add_epoch(r.id, e);
  db.finish_run(r.id, record::RunStatus::completed, "max epochs");
}

// A row as commsgd-bench kernels writes it, at density 0.01.
BenchRow kernel(const char* name, double d, double seconds) {
  const std::string params = fmt::format(R"({{"d":{},"density":0.01,"k":{}}})", d, d / 100);
  return BenchRow{"kernels", name, params, seconds, "s", "test", "", "test"};
}

}  // namespace

void write_handmade_database(const std::filesystem::path& file) {
  RunDatabase db(file);
  // dense P=1: steady step 0.1 s -> 1*10/0.1 = 100 samples/s, the baseline of network local.
  // val top-1 0.5, 0.7, 0.6 at 10, 20, 30 s: final 0.6, best 0.7 (epoch 1).
  add_run(db, run(HandmadeRuns::dense1, "dense", 1), windows(0.1, 0.1, 0),
          {epoch(0, 0.5, 10), epoch(1, 0.7, 20), epoch(2, 0.6, 30)});
  // topk P=1: 1*10/0.2 = 50 samples/s; not the baseline, as a dense 1-worker run exists.
  add_run(db, run(HandmadeRuns::topk1, "topk", 1), windows(0.2, 0.2, 5), {epoch(0, 0.5, 10)});
  // dense P=4: steady windows of 0.2 and 0.3 s (phases below) -> step 0.25 s, 4*10/0.25 = 160
  // samples/s, efficiency 160 / (4*100) = 0.4. Means: data 0.01, forward-backward 0.05,
  // communicate 0.1, wait 0.02, update 0.01, other 0.25 - 0.19 = 0.06; communicate share 0.4.
  // 1000 bytes sent per step. val top-1 0.4, 0.5, 0.66 at 8, 16, 24 s.
  add_run(db, run(HandmadeRuns::dense4, "dense", 4),
          {window(9, 0, 1.0, 0, 0, 0, 0, 0, 1000),
           window(19, 0.01, 0.05, 0, 0.08, 0.02, 0.01, 0.03, 1000),
           window(29, 0.01, 0.05, 0, 0.12, 0.02, 0.01, 0.09, 1000)},
          {epoch(0, 0.4, 8), epoch(1, 0.5, 16), epoch(2, 0.66, 24)});
  // topk P=4: 4*10/0.125 = 320 samples/s, efficiency 0.8, speedup over dense P=4: 2.
  // 10 bytes sent per step. val top-1 0.6, 0.8, 0.9 at 5, 10, 15 s: reaches 0.65 at 10 s.
  add_run(db, run(HandmadeRuns::topk4, "topk", 4), windows(0.125, 0.125, 10),
          {epoch(0, 0.6, 5), epoch(1, 0.8, 10), epoch(2, 0.9, 15)});
  // gtopk P=2 on network eth, where no 1-worker run exists: efficiency NULL. A single window
  // (0.5 s): it is the steady state, 2*10/0.5 = 40 samples/s. No epochs.
  add_run(db, run(HandmadeRuns::gtopk2, "gtopk", 2, "eth"), {window(9, 0, 0.5, 0, 0, 0, 0, 0, 7)},
          {});
  // Selection benchmarks: exact at two sizes; gaussian at one, measured twice (the later wins).
  db.add_bench(std::vector<BenchRow>{kernel("exact", 1e6, 0.004), kernel("exact", 1e7, 0.05),
                                     kernel("gaussian", 1e6, 0.003)});
  db.add_bench(std::vector<BenchRow>{kernel("gaussian", 1e6, 0.002)});
}

}  // namespace commsgd::testing
