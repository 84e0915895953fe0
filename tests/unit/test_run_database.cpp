#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "analysis/record/run_database.hpp"

namespace commsgd::record {
namespace {

namespace fs = std::filesystem;

// A column value as SQLite returns it; monostate is NULL.
using Value = std::variant<std::monostate, std::int64_t, double, std::string>;
using Row = std::map<std::string, Value>;

// Runs a query with text parameters and returns all rows keyed by column name.
std::vector<Row> query(sqlite3* db, const std::string& sql, std::vector<std::string> params = {}) {
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  for (size_t i = 0; i < params.size(); ++i)
    sqlite3_bind_text(st, int(i + 1), params[i].c_str(), -1, SQLITE_TRANSIENT);
  std::vector<Row> rows;
  while (sqlite3_step(st) == SQLITE_ROW) {
    Row r;
    for (int c = 0; c < sqlite3_column_count(st); ++c) {
      Value v;
      switch (sqlite3_column_type(st, c)) {
        case SQLITE_INTEGER:
          v = std::int64_t{sqlite3_column_int64(st, c)};
          break;
        case SQLITE_FLOAT:
          v = sqlite3_column_double(st, c);
          break;
        case SQLITE_TEXT:
          v = std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, c)));
          break;
        default:
          break;
      }
      r[sqlite3_column_name(st, c)] = v;
    }
    rows.push_back(std::move(r));
  }
  sqlite3_finalize(st);
  return rows;
}

std::int64_t count(sqlite3* db, const std::string& table) {
  return std::get<std::int64_t>(query(db, "SELECT count(*) AS n FROM " + table)[0]["n"]);
}

// Expects `f` to throw DatabaseError whose one-line message contains every fragment.
template <class F>
void expect_db_error(F f, std::vector<std::string> fragments) {
  try {
    f();
    ADD_FAILURE() << "no DatabaseError thrown";
  } catch (const DatabaseError& e) {
    std::string msg = e.what();
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    for (const auto& f : fragments) EXPECT_NE(msg.find(f), std::string::npos) << msg;
  }
}

RunInfo full_run() {
  RunInfo r;
  r.id = new_run_id();
  r.algo = "topk-ef";
  r.selector = "topk";
  r.aggregation = "allgather";
  r.topology = "ring";
  r.model = "resnet20";
  r.dataset = "cifar10";
  r.workers = 16;
  r.nodes = 4;
  r.network = "ib-hdr";
  r.backend = "nccl";
  r.device = "cuda";
  r.density = 0.001;
  r.batch_size = 128;
  r.lr = 0.1;
  r.epochs = 90;
  r.seed = 0xfedcba9876543210ull;  // above INT64_MAX: exercises the bit-pattern storage
  r.config_json = R"({"lr":0.1})";
  r.git_revision = "abc1234";
  r.host = "node001";
  r.slurm_job_id = "1234";
  r.slurm_array_job_id = "1200";
  r.slurm_array_task_id = "7";
  return r;
}

StepRow make_step(std::int64_t step, int epoch) {
  StepRow s;
  s.step = step;
  s.epoch = epoch;
  double base = double(step) * 100;  // every stat distinct, so a swapped column shows up
  Stat* stats[] = {&s.loss,           &s.data_s,        &s.forward_backward_s,
                   &s.select_s,       &s.communicate_s, &s.wait_s,
                   &s.update_s,       &s.total_s,       &s.bytes_sent,
                   &s.bytes_received, &s.density,       &s.overlapped_communicate_s};
  for (Stat* st : stats) {
    *st = {base + 0.25, base + 0.5};
    base += 1;
  }
  return s;
}

// Required fields distinct per epoch; optionals unset. (Not designated initializers: GCC 12
// -Wmissing-field-initializers flags the omitted optionals.)
EpochRow epoch_row(int epoch) {
  EpochRow e;
  e.epoch = epoch;
  e.train_loss = 2.5 / epoch;
  e.train_acc = 0.125 * epoch;
  e.val_loss = 2.75 / epoch;
  e.val_top1 = 0.1 * epoch;
  e.wall_seconds = 60.5 * epoch;
  return e;
}

const std::regex kIsoUtc(R"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)");

class RunDatabaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("commsgd_rdb_" + new_run_id());
    fs::create_directories(dir_);
  }
  void TearDown() override {
    fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::add);
    fs::remove_all(dir_);
  }
  fs::path dir_;
};

TEST_F(RunDatabaseTest, CreatesSchemaWithPragmas) {
  fs::path file = dir_ / "nested" / "dirs" / "runs.db";  // parents are created
  RunDatabase db(file);
  EXPECT_TRUE(fs::exists(file));
  EXPECT_EQ(db.schema_version(), RunDatabase::kSchemaVersion);
  EXPECT_EQ(query(db.handle(), "PRAGMA journal_mode")[0]["journal_mode"], Value{"wal"});
  EXPECT_EQ(query(db.handle(), "PRAGMA foreign_keys")[0]["foreign_keys"], Value{std::int64_t{1}});
  for (const char* t : {"runs", "epochs", "steps", "grad_stats", "norm_study", "bench"})
    EXPECT_EQ(count(db.handle(), t), 0) << t;
}

// A file written by a build of schema version 1 (no norm_study) is migrated when opened: its
// rows stay, and it ends with the same tables, defined alike, as a file created new.
TEST_F(RunDatabaseTest, MigratesAVersionOneFileKeepingItsRows) {
  const fs::path old_file = dir_ / "v1.db";
  RunInfo r = full_run();
  {
    RunDatabase db(old_file);
    db.begin_run(r);
    std::vector<StepRow> steps = {make_step(0, 1), make_step(1, 1)};
    db.add_steps(r.id, steps);
    // What versions 2 to 5 added, gone: a version-1 file.
    ASSERT_EQ(sqlite3_exec(db.handle(),
                           "ALTER TABLE steps DROP COLUMN overlapped_communicate_s_mean; "
                           "ALTER TABLE steps DROP COLUMN overlapped_communicate_s_max; "
                           "DROP TABLE run_overlaps; DROP TABLE run_figures; DROP TABLE ranks; "
                           "DROP TABLE norm_study; PRAGMA user_version = 1",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
  }
  RunDatabase migrated(old_file);
  EXPECT_EQ(migrated.schema_version(), RunDatabase::kSchemaVersion);
  EXPECT_EQ(count(migrated.handle(), "runs"), 1);
  EXPECT_EQ(count(migrated.handle(), "steps"), 2);
  // Steps recorded before version 5 did not separate overlapped communication: unknown, not 0.
  EXPECT_EQ(query(migrated.handle(),
                  "SELECT count(*) AS n FROM steps WHERE overlapped_communicate_s_mean IS NULL")
                .at(0)["n"],
            Value{std::int64_t{2}});
  const std::vector<NormStudyRow> rows = {{0, 1, 2.0, 0.1, 0.5, 1.9, 1.99}};
  migrated.add_norm_study(r.id, rows);
  EXPECT_EQ(count(migrated.handle(), "norm_study"), 1);
  const std::vector<RankRow> ranks = {{0, "2026-11-24T00:00:00.000Z", "node1", std::nullopt, 1}};
  migrated.record_ranks(r.id, ranks);
  EXPECT_EQ(count(migrated.handle(), "ranks"), 1);
  RunDatabase fresh(dir_ / "new.db");
  const std::string tables =
      "SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name";
  EXPECT_EQ(query(migrated.handle(), tables), query(fresh.handle(), tables));
}

TEST_F(RunDatabaseTest, RoundTrip) {
  RunDatabase db(dir_ / "runs.db");
  RunInfo r = full_run();
  db.begin_run(r);

  Row run = query(db.handle(), "SELECT * FROM runs WHERE id = ?", {r.id}).at(0);
  EXPECT_EQ(run.size(), 27u);  // every column below is checked
  EXPECT_EQ(run["id"], Value{r.id});
  EXPECT_TRUE(std::regex_match(std::get<std::string>(run["created_at"]), kIsoUtc));
  EXPECT_EQ(run["finished_at"], Value{});
  EXPECT_EQ(run["status"], Value{"running"});
  EXPECT_EQ(run["exit_reason"], Value{});
  EXPECT_EQ(run["algo"], Value{"topk-ef"});
  EXPECT_EQ(run["selector"], Value{"topk"});
  EXPECT_EQ(run["aggregation"], Value{"allgather"});
  EXPECT_EQ(run["topology"], Value{"ring"});
  EXPECT_EQ(run["model"], Value{"resnet20"});
  EXPECT_EQ(run["dataset"], Value{"cifar10"});
  EXPECT_EQ(run["workers"], Value{std::int64_t{16}});
  EXPECT_EQ(run["nodes"], Value{std::int64_t{4}});
  EXPECT_EQ(run["network"], Value{"ib-hdr"});
  EXPECT_EQ(run["backend"], Value{"nccl"});
  EXPECT_EQ(run["device"], Value{"cuda"});
  EXPECT_EQ(run["density"], Value{0.001});
  EXPECT_EQ(run["batch_size"], Value{std::int64_t{128}});
  EXPECT_EQ(run["lr"], Value{0.1});
  EXPECT_EQ(run["epochs"], Value{std::int64_t{90}});
  EXPECT_EQ(static_cast<std::uint64_t>(std::get<std::int64_t>(run["seed"])), r.seed);
  EXPECT_EQ(run["config"], Value{R"({"lr":0.1})"});
  EXPECT_EQ(run["git_revision"], Value{"abc1234"});
  EXPECT_EQ(run["host"], Value{"node001"});
  EXPECT_EQ(run["slurm_job_id"], Value{"1234"});
  EXPECT_EQ(run["slurm_array_job_id"], Value{"1200"});
  EXPECT_EQ(run["slurm_array_task_id"], Value{"7"});

  // Optionals and empty JSON become NULL.
  RunInfo bare = full_run();
  bare.density.reset();
  bare.config_json.clear();
  bare.slurm_job_id.reset();
  bare.slurm_array_job_id.reset();
  bare.slurm_array_task_id.reset();
  bare.seed = 42;
  db.begin_run(bare);
  Row b = query(db.handle(), "SELECT * FROM runs WHERE id = ?", {bare.id}).at(0);
  for (const char* c :
       {"density", "config", "slurm_job_id", "slurm_array_job_id", "slurm_array_task_id"})
    EXPECT_EQ(b[c], Value{}) << c;
  EXPECT_EQ(b["seed"], Value{std::int64_t{42}});

  // Epochs: one with every optional set, one with none.
  EpochRow e1 = epoch_row(1), e2 = epoch_row(2);
  e1.val_top5 = 0.8;
  e1.val_perplexity = 9.5;
  e1.consensus_distance = 1e-3;
  db.add_epoch(r.id, e1);
  db.add_epoch(r.id, e2);
  auto ep = query(db.handle(), "SELECT * FROM epochs WHERE run_id = ? ORDER BY epoch", {r.id});
  ASSERT_EQ(ep.size(), 2u);
  EXPECT_EQ(ep[0].size(), 10u);
  for (size_t i = 0; i < 2; ++i) {
    const EpochRow& e = i == 0 ? e1 : e2;
    auto opt = [](std::optional<double> v) { return v ? Value{*v} : Value{}; };
    EXPECT_EQ(ep[i]["run_id"], Value{r.id});
    EXPECT_EQ(ep[i]["epoch"], Value{std::int64_t{e.epoch}});
    EXPECT_EQ(ep[i]["train_loss"], Value{e.train_loss});
    EXPECT_EQ(ep[i]["train_acc"], Value{e.train_acc});
    EXPECT_EQ(ep[i]["val_loss"], Value{e.val_loss});
    EXPECT_EQ(ep[i]["val_top1"], Value{e.val_top1});
    EXPECT_EQ(ep[i]["val_top5"], opt(e.val_top5));
    EXPECT_EQ(ep[i]["val_perplexity"], opt(e.val_perplexity));
    EXPECT_EQ(ep[i]["wall_seconds"], Value{e.wall_seconds});
    EXPECT_EQ(ep[i]["consensus_distance"], opt(e.consensus_distance));
  }

  // Steps: every mean/max column, by name.
  std::vector<StepRow> steps = {make_step(10, 1), make_step(11, 1), make_step(12, 2)};
  db.add_steps(r.id, steps);
  auto st = query(db.handle(), "SELECT * FROM steps WHERE run_id = ? ORDER BY step", {r.id});
  ASSERT_EQ(st.size(), steps.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    const StepRow& s = steps[i];
    EXPECT_EQ(st[i].size(), 27u);
    EXPECT_EQ(st[i]["run_id"], Value{r.id});
    EXPECT_EQ(st[i]["step"], Value{s.step});
    EXPECT_EQ(st[i]["epoch"], Value{std::int64_t{s.epoch}});
    std::pair<const char*, Stat> stats[] = {
        {"loss", s.loss},
        {"data_s", s.data_s},
        {"forward_backward_s", s.forward_backward_s},
        {"select_s", s.select_s},
        {"communicate_s", s.communicate_s},
        {"wait_s", s.wait_s},
        {"update_s", s.update_s},
        {"total_s", s.total_s},
        {"bytes_sent", s.bytes_sent},
        {"bytes_received", s.bytes_received},
        {"density", s.density},
        {"overlapped_communicate_s", s.overlapped_communicate_s}};
    for (auto [name, stat] : stats) {
      EXPECT_EQ(st[i][std::string(name) + "_mean"], Value{stat.mean}) << name;
      EXPECT_EQ(st[i][std::string(name) + "_max"], Value{stat.max}) << name;
    }
  }
  db.add_steps(r.id, {});  // empty batch is a no-op

  // Bench rows.
  std::vector<BenchRow> bench = {
      {"kernels", "topk", R"({"d":1000000})", 1.5e-3, "s", "node001", R"({"gpu":"H100"})", "abc"},
      {"collectives", "allgather", "", 22.5, "GB/s", "node002", "", "def"}};
  db.add_bench(bench);
  auto bn = query(db.handle(), "SELECT * FROM bench ORDER BY id");
  ASSERT_EQ(bn.size(), 2u);
  EXPECT_EQ(bn[0].size(), 10u);
  EXPECT_EQ(bn[0]["created_at"], bn[1]["created_at"]);  // one batch, one timestamp
  EXPECT_TRUE(std::regex_match(std::get<std::string>(bn[0]["created_at"]), kIsoUtc));
  auto json = [](const std::string& s) { return s.empty() ? Value{} : Value{s}; };
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(bn[i]["id"], Value{std::int64_t(i + 1)});
    EXPECT_EQ(bn[i]["suite"], Value{bench[i].suite});
    EXPECT_EQ(bn[i]["name"], Value{bench[i].name});
    EXPECT_EQ(bn[i]["params"], json(bench[i].params_json));
    EXPECT_EQ(bn[i]["value"], Value{bench[i].value});
    EXPECT_EQ(bn[i]["unit"], Value{bench[i].unit});
    EXPECT_EQ(bn[i]["host"], Value{bench[i].host});
    EXPECT_EQ(bn[i]["machine"], json(bench[i].machine_json));
    EXPECT_EQ(bn[i]["git_revision"], Value{bench[i].git_revision});
  }
}

TEST_F(RunDatabaseTest, StatusTransitions) {
  RunDatabase db(dir_ / "runs.db");
  RunInfo a = full_run(), b = full_run(), c = full_run();
  db.begin_run(a);
  db.begin_run(b);
  db.begin_run(c);
  db.finish_run(a.id, RunStatus::completed, "max epochs");
  db.finish_run(b.id, RunStatus::failed, "loss is NaN at step 1234");
  db.finish_run(c.id, RunStatus::preempted, "SIGTERM");

  auto check = [&](const std::string& id, const char* status, const char* reason) {
    Row r = query(db.handle(), "SELECT * FROM runs WHERE id = ?", {id}).at(0);
    EXPECT_EQ(r["status"], Value{status});
    EXPECT_EQ(r["exit_reason"], Value{reason});
    const auto& finished = std::get<std::string>(r["finished_at"]);
    EXPECT_TRUE(std::regex_match(finished, kIsoUtc)) << finished;
    EXPECT_GE(finished, std::get<std::string>(r["created_at"]));
  };
  check(a.id, "completed", "max epochs");
  check(b.id, "failed", "loss is NaN at step 1234");
  check(c.id, "preempted", "SIGTERM");

  // A finished run stays finished; unknown runs and a 'running' end state are refused.
  expect_db_error([&] { db.finish_run(b.id, RunStatus::completed, ""); }, {"finish_run", b.id});
  check(b.id, "failed", "loss is NaN at step 1234");
  expect_db_error([&] { db.finish_run("no-such-run", RunStatus::failed, "x"); }, {"no-such-run"});
  EXPECT_THROW(db.finish_run(a.id, RunStatus::running, ""), std::invalid_argument);

  EXPECT_EQ(to_string(RunStatus::running), "running");
  EXPECT_EQ(to_string(RunStatus::completed), "completed");
  EXPECT_EQ(to_string(RunStatus::failed), "failed");
  EXPECT_EQ(to_string(RunStatus::preempted), "preempted");
}

// Checkpoints: a signal's mark (failed, then preempted once the checkpoint is written), resuming
// (back to running, dropping what came after the checkpoint), and a signal too late to stop a run
// that then completed.
TEST_F(RunDatabaseTest, CheckpointTransitions) {
  RunDatabase db(dir_ / "runs.db");
  RunInfo r = full_run();
  db.begin_run(r);
  for (int epoch = 1; epoch <= 3; ++epoch) db.add_epoch(r.id, epoch_row(epoch));
  std::vector<StepRow> steps;
  for (int step = 0; step < 30; ++step) steps.push_back(make_step(step, 1 + step / 10));
  db.add_steps(r.id, steps);
  std::vector<GradStatsRow> grad_stats;
  for (int step = 0; step < 30; step += 5) {
    grad_stats.push_back({step, 1 + step / 10, 0.5, 0.99, 0.98, R"({"counts": [1, 2]})"});
  }
  db.add_grad_stats(r.id, grad_stats);
  std::vector<NormStudyRow> norm_study;
  for (int step = 0; step < 30; step += 10)
    norm_study.push_back({step, 1 + step / 10, 2, 0.1, 1, 1.9, 1.99});
  db.add_norm_study(r.id, norm_study);
  const auto status = [&] {
    return std::get<std::string>(
        query(db.handle(), "SELECT status FROM runs WHERE id = ?", {r.id}).at(0)["status"]);
  };

  db.finish_run(r.id, RunStatus::failed, "terminated by SIGTERM");
  db.mark_preempted(r.id, "stopped by SIGTERM at step 20 with checkpoint ck/step-0000000020");
  EXPECT_EQ(status(), "preempted");
  db.resume_run(r.id, 20, 3);
  EXPECT_EQ(status(), "running");
  EXPECT_EQ(count(db.handle(), "steps"), 20);
  EXPECT_EQ(count(db.handle(), "grad_stats"), 4);  // steps 0, 5, 10, 15
  EXPECT_EQ(count(db.handle(), "norm_study"), 2);  // steps 0, 10
  EXPECT_EQ(count(db.handle(), "epochs"), 2);
  EXPECT_EQ(query(db.handle(), "SELECT exit_reason FROM runs").at(0)["exit_reason"], Value{});

  db.finish_run(r.id, RunStatus::failed, "terminated by SIGTERM");
  db.complete_after_signal(r.id, "SIGTERM came after the last checkpoint opportunity");
  EXPECT_EQ(status(), "completed");
  // A completed run is neither resumed, preempted nor completed again.
  expect_db_error([&] { db.resume_run(r.id, 0, 0); }, {"resume", r.id});
  expect_db_error([&] { db.mark_preempted(r.id, "x"); }, {"mark_preempted", r.id});
  expect_db_error([&] { db.complete_after_signal(r.id, "x"); }, {"complete_after_signal", r.id});
  EXPECT_EQ(count(db.handle(), "steps"), 20);
}

TEST_F(RunDatabaseTest, ReopenKeepsDataAndVersion) {
  fs::path file = dir_ / "runs.db";
  RunInfo r = full_run();
  {
    RunDatabase db(file);
    db.begin_run(r);
    db.add_epoch(r.id, epoch_row(1));
    std::vector<StepRow> s = {make_step(1, 1)};
    db.add_steps(r.id, s);
  }
  RunDatabase db(file);
  EXPECT_EQ(db.schema_version(), RunDatabase::kSchemaVersion);
  EXPECT_EQ(count(db.handle(), "runs"), 1);
  EXPECT_EQ(count(db.handle(), "epochs"), 1);
  EXPECT_EQ(count(db.handle(), "steps"), 1);
  db.add_epoch(r.id, epoch_row(2));  // and it is still writable
  db.finish_run(r.id, RunStatus::completed, "");
  EXPECT_EQ(count(db.handle(), "epochs"), 2);
}

TEST_F(RunDatabaseTest, MoveTransfersConnection) {
  RunDatabase a(dir_ / "runs.db");
  RunDatabase b(std::move(a));
  b.begin_run(full_run());
  EXPECT_EQ(count(b.handle(), "runs"), 1);
  EXPECT_THROW(a.schema_version(), std::logic_error);  // NOLINT(bugprone-use-after-move)
}

TEST_F(RunDatabaseTest, RefusesNewerSchema) {
  fs::path file = dir_ / "future.db";
  {
    RunDatabase db(file);
    ASSERT_EQ(sqlite3_exec(db.handle(), "PRAGMA user_version = 99", nullptr, nullptr, nullptr),
              SQLITE_OK);
  }
  expect_db_error([&] { RunDatabase db(file); },
                  {file.string(), "schema version 99",
                   "newer than this build (" + std::to_string(RunDatabase::kSchemaVersion) + ")"});
}

TEST_F(RunDatabaseTest, RefusesNonSqliteFile) {
  for (size_t size : {16, 100, 4096}) {
    fs::path file = dir_ / ("garbage" + std::to_string(size) + ".db");
    std::string garbage(size, '\0');
    for (size_t i = 0; i < size; ++i) garbage[i] = char((i * 7919 + 13) & 0xff);
    std::ofstream(file, std::ios::binary) << garbage;
    expect_db_error([&] { RunDatabase db(file); }, {file.string(), "not an SQLite database"});
    // ...and leaves it untouched.
    std::ifstream in(file, std::ios::binary);
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), garbage) << size;
  }
}

TEST_F(RunDatabaseTest, RefusesForeignSqliteFile) {
  fs::path file = dir_ / "other.db";
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(file.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "CREATE TABLE t (x)", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(raw);
  expect_db_error([&] { RunDatabase db(file); }, {file.string(), "not a commsgd run database"});
}

TEST_F(RunDatabaseTest, RefusesUnwritablePaths) {
  // Parent "directory" is a regular file: works as any user, root included.
  fs::path blocker = dir_ / "blocker";
  std::ofstream(blocker) << "x";
  fs::path under_file = blocker / "sub" / "runs.db";
  expect_db_error([&] { RunDatabase db(under_file); }, {under_file.string()});
  // The path is a directory.
  expect_db_error([&] { RunDatabase db(dir_); }, {dir_.string()});
}

TEST_F(RunDatabaseTest, RefusesWithoutPermission) {
  if (geteuid() == 0) GTEST_SKIP() << "root ignores file permissions";
  fs::path ro_dir = dir_ / "ro";
  fs::create_directories(ro_dir);
  fs::permissions(ro_dir, fs::perms::owner_read | fs::perms::owner_exec);
  expect_db_error([&] { RunDatabase db(ro_dir / "runs.db"); }, {(ro_dir / "runs.db").string()});
  fs::path ro_file = dir_ / "ro.db";
  { RunDatabase db(ro_file); }
  fs::permissions(ro_file, fs::perms::owner_read);
  expect_db_error([&] { RunDatabase db(ro_file); }, {ro_file.string(), "read-only"});
}

TEST_F(RunDatabaseTest, CheckConstraintRejectsBadStatus) {
  RunDatabase db(dir_ / "runs.db");
  RunInfo r = full_run();
  db.begin_run(r);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(
      sqlite3_prepare_v2(db.handle(), "UPDATE runs SET status = ? WHERE id = ?", -1, &st, nullptr),
      SQLITE_OK);
  sqlite3_bind_text(st, 1, "exploded", -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 2, r.id.c_str(), -1, SQLITE_STATIC);
  EXPECT_EQ(sqlite3_step(st), SQLITE_CONSTRAINT);
  EXPECT_NE(std::string(sqlite3_errmsg(db.handle())).find("CHECK constraint failed"),
            std::string::npos);
  sqlite3_finalize(st);
  EXPECT_EQ(query(db.handle(), "SELECT status FROM runs")[0]["status"], Value{"running"});
}

TEST_F(RunDatabaseTest, DuplicateStepThrowsAndBatchIsAtomic) {
  RunDatabase db(dir_ / "runs.db");
  RunInfo r = full_run();
  db.begin_run(r);
  std::vector<StepRow> first = {make_step(5, 0)};
  db.add_steps(r.id, first);
  expect_db_error([&] { db.add_steps(r.id, first); },
                  {"runs.db", "add_steps", "UNIQUE constraint failed"});
  // A batch failing halfway leaves nothing behind.
  std::vector<StepRow> batch = {make_step(6, 0), make_step(7, 0), make_step(5, 0)};
  EXPECT_THROW(db.add_steps(r.id, batch), DatabaseError);
  EXPECT_EQ(count(db.handle(), "steps"), 1);
  // The connection is usable afterwards (no transaction left open).
  std::vector<StepRow> next = {make_step(6, 0)};
  db.add_steps(r.id, next);
  EXPECT_EQ(count(db.handle(), "steps"), 2);
}

TEST_F(RunDatabaseTest, ForeignKeysAndDuplicatesEnforced) {
  RunDatabase db(dir_ / "runs.db");
  std::vector<StepRow> s = {make_step(1, 0)};
  expect_db_error([&] { db.add_steps("no-such-run", s); }, {"FOREIGN KEY constraint failed"});
  expect_db_error([&] { db.add_epoch("no-such-run", epoch_row(1)); },
                  {"FOREIGN KEY constraint failed"});
  RunInfo r = full_run();
  db.begin_run(r);
  expect_db_error([&] { db.begin_run(r); }, {"begin_run", "UNIQUE constraint failed: runs.id"});
  db.add_epoch(r.id, epoch_row(3));
  expect_db_error([&] { db.add_epoch(r.id, epoch_row(3)); }, {"UNIQUE constraint failed"});
  RunInfo no_id = full_run();
  no_id.id.clear();
  EXPECT_THROW(db.begin_run(no_id), std::invalid_argument);
}

// Several trainers opening the same fresh file at once: exactly one creates the schema and
// the others wait for it instead of failing or creating it twice. (The WAL-switch race this
// also covers is timing dependent: without the retry it fails only ~2% of runs.)
TEST_F(RunDatabaseTest, ConcurrentOpenOfFreshFile) {
  fs::path file = dir_ / "shared.db";
  std::vector<std::thread> threads;
  std::vector<std::string> errors(16);
  for (size_t i = 0; i < errors.size(); ++i) {
    threads.emplace_back([&, i] {
      try {
        RunDatabase db(file);
        db.begin_run(full_run());
      } catch (const std::exception& e) {
        errors[i] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& e : errors) EXPECT_EQ(e, "");
  RunDatabase db(file);
  EXPECT_EQ(db.schema_version(), RunDatabase::kSchemaVersion);
  EXPECT_EQ(count(db.handle(), "runs"), std::int64_t(errors.size()));
}

TEST(RunIdTest, DistinctWellFormedV4Uuids) {
  const std::regex v4("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}");
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    std::string id = new_run_id();
    EXPECT_TRUE(std::regex_match(id, v4)) << id;
    seen.insert(id);
  }
  EXPECT_EQ(seen.size(), 1000u);
}

TEST(TimestampTest, Iso8601Utc) {
  std::string t = utc_now_iso8601();
  EXPECT_TRUE(std::regex_match(t, kIsoUtc)) << t;
  EXPECT_GE(t, "2024-");
}

}  // namespace
}  // namespace commsgd::record
