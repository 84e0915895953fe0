// A run database on a cluster's shared file system: the journal mode chosen from the file
// system's type, failures of ranks on other hosts kept beside the database and folded in, and one
// writing run at a time in a shared file.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "analysis/record/file_system.hpp"
#include "analysis/record/peer_failures.hpp"
#include "analysis/record/run_database.hpp"
#include "analysis/record/writer_claim.hpp"
#include "tests/support/temp_dir.hpp"

namespace commsgd::record {
namespace {

namespace fs = std::filesystem;

std::string text_of(sqlite3* db, const std::string& sql) {
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  std::string text = "(no row)";
  if (sqlite3_step(st) == SQLITE_ROW) {
    const auto* value = sqlite3_column_text(st, 0);
    text = value ? reinterpret_cast<const char*>(value) : "NULL";
  }
  sqlite3_finalize(st);
  return text;
}

RunInfo run(const std::string& id) {
  RunInfo info;
  info.id = id;
  info.algo = "dense";
  return info;
}

TEST(FileSystemType, NetworkFileSystemsAreKnownByTheirMagic) {
  for (const auto& [magic, name] :
       std::initializer_list<std::pair<long, const char*>>{{0x6969, "nfs"},
                                                           {0x0BD00BD0, "lustre"},
                                                           {0x47504653, "gpfs"},
                                                           {0x19830326, "beegfs"},
                                                           {0x00C36400, "ceph"},
                                                           {0x65735546, "fuse"}}) {
    const FileSystem fs = file_system_of_type(magic);
    EXPECT_EQ(fs.name, name);
    EXPECT_TRUE(fs.network) << name;
    EXPECT_EQ(journal_mode_for(fs), JournalMode::rollback) << name;
  }
  // CIFS's magic has its top bit set: statfs may hand it back sign-extended.
  EXPECT_EQ(file_system_of_type(static_cast<long>(static_cast<int>(0xFF534D42))).name, "cifs");
}

TEST(FileSystemType, LocalAndUnknownFileSystemsKeepWal) {
  for (const long magic : {0xEF53L, 0x58465342L, 0x01021994L, 0x794C7630L, 0x12345678L}) {
    const FileSystem fs = file_system_of_type(magic);
    EXPECT_FALSE(fs.network) << fs.name;
    EXPECT_EQ(journal_mode_for(fs), JournalMode::wal) << fs.name;
  }
  EXPECT_EQ(file_system_of_type(0x12345678).name, "unknown");
}

TEST(FileSystemType, APathNotMadeYetIsJudgedByItsNearestParent) {
  const testing::TempDir dir;
  EXPECT_EQ(file_system_of(dir.path() / "not" / "yet" / "runs.sqlite").name,
            file_system_of(dir.path()).name);
}

TEST(JournalMode, ADatabaseOnANetworkFileSystemUsesTheRollbackJournal) {
  const testing::TempDir dir;
  const fs::path file = dir.path() / "runs.sqlite";
  {
    RunDatabase local(file, file_system_of_type(0xEF53));
    EXPECT_EQ(text_of(local.handle(), "PRAGMA journal_mode"), "wal");
  }
  // The same file met again on NFS (a directory moved, a mount changed): converted.
  RunDatabase nfs(file, file_system_of_type(0x6969));
  EXPECT_EQ(text_of(nfs.handle(), "PRAGMA journal_mode"), "delete");
  EXPECT_EQ(nfs.file_system().name, "nfs");
  nfs.begin_run(run("a"));
  EXPECT_FALSE(fs::exists(dir.path() / "runs.sqlite-wal"));
}

class PeerFailures : public ::testing::Test {
 protected:
  void SetUp() override {
    db_.emplace(file_);
    db_->begin_run(run("r1"));
  }
  std::string row(const std::string& column) {
    return text_of(db_->handle(), "SELECT " + column + " FROM runs WHERE id = 'r1'");
  }

  testing::TempDir dir_;
  fs::path file_ = dir_.path() / "runs.sqlite";
  std::optional<RunDatabase> db_;
};

TEST_F(PeerFailures, AFailureIsWrittenBesideTheDatabaseAndReadBackWhole) {
  const fs::path written =
      write_peer_failure(file_, {"r1", 3, "2026-01-01T00:00:01.000Z", "non-finite loss\nat 7", {}});
  EXPECT_EQ(written, dir_.path() / "runs.sqlite.peer-failures" / "r1.rank3");
  const std::vector<PeerFailure> read = read_peer_failures(file_);
  ASSERT_EQ(read.size(), 1u);
  EXPECT_EQ(read[0].run_id, "r1");
  EXPECT_EQ(read[0].rank, 3);
  EXPECT_EQ(read[0].at, "2026-01-01T00:00:01.000Z");
  EXPECT_EQ(read[0].reason, "non-finite loss\nat 7");
  EXPECT_TRUE(read_peer_failures(file_, "r2").empty());
}

TEST_F(PeerFailures, AFileCutShortIsLeftForALaterReading) {
  fs::create_directories(peer_failures_dir(file_));
  std::ofstream(peer_failures_dir(file_) / "r1.rank2") << "run r1\nrank 2\n";
  EXPECT_TRUE(read_peer_failures(file_).empty());
}

TEST_F(PeerFailures, ARunningRunFailsWithTheEarliestPeersReasonAndTheFilesGo) {
  write_peer_failure(file_, {"r1", 2, "2026-01-01T00:00:02.000Z", "later", {}});
  write_peer_failure(file_, {"r1", 3, "2026-01-01T00:00:01.000Z", "first", {}});
  EXPECT_TRUE(fold_peer_failures(*db_, file_, "r1"));
  EXPECT_EQ(row("status"), "failed");
  EXPECT_EQ(row("exit_reason"), "rank 3: first");
  EXPECT_EQ(row("finished_at"), "2026-01-01T00:00:01.000Z");
  EXPECT_FALSE(fs::exists(peer_failures_dir(file_)));
}

TEST_F(PeerFailures, APeersEarlierFailureReplacesRankZerosRecordOfItsConsequence) {
  write_peer_failure(file_, {"r1", 3, utc_now_iso8601(), "non-finite loss", {}});
  db_->finish_run("r1", RunStatus::failed, "terminated by SIGTERM");
  const std::string finished = row("finished_at");
  EXPECT_TRUE(fold_peer_failures(*db_, file_, "r1"));
  EXPECT_EQ(row("exit_reason"), "rank 3: non-finite loss");
  EXPECT_EQ(row("finished_at"), finished);
}

TEST_F(PeerFailures, APeersLaterFailureIsAConsequenceAndLeavesTheRowAsItIs) {
  db_->finish_run("r1", RunStatus::failed, "rank 0: non-finite loss");
  write_peer_failure(file_, {"r1", 1, "2999-01-01T00:00:00.000Z", "MPI error", {}});
  EXPECT_FALSE(fold_peer_failures(*db_, file_, "r1"));
  EXPECT_EQ(row("exit_reason"), "rank 0: non-finite loss");
  EXPECT_FALSE(fs::exists(peer_failures_dir(file_)));  // folded all the same: nothing to add
}

TEST_F(PeerFailures, ACompletedOrPreemptedRunStaysSo) {
  db_->begin_run(run("r2"));
  db_->finish_run("r1", RunStatus::completed, "");
  db_->finish_run("r2", RunStatus::preempted, "SIGUSR1");
  write_peer_failure(file_, {"r1", 1, "2000-01-01T00:00:00.000Z", "late", {}});
  write_peer_failure(file_, {"r2", 1, "2000-01-01T00:00:00.000Z", "late", {}});
  EXPECT_FALSE(fold_peer_failures(*db_, file_, "r1"));
  EXPECT_FALSE(fold_peer_failures(*db_, file_, "r2"));
  EXPECT_EQ(row("status"), "completed");
}

TEST_F(PeerFailures, AnotherRunsFailuresStayWhenOneRunIsFolded) {
  write_peer_failure(file_, {"r1", 1, utc_now_iso8601(), "mine", {}});
  write_peer_failure(file_, {"other", 1, utc_now_iso8601(), "not mine", {}});
  fold_peer_failures(*db_, file_, "r1");
  const std::vector<PeerFailure> left = read_peer_failures(file_);
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].run_id, "other");
}

TEST_F(PeerFailures, AMergeRecordsEachRunsEarliestFailureAndLeavesTheSourcesFiles) {
  const fs::path source = dir_.path() / "source.sqlite";
  write_peer_failure(source, {"r1", 2, "2026-01-01T00:00:02.000Z", "second", {}});
  write_peer_failure(source, {"r1", 1, "2026-01-01T00:00:01.000Z", "first", {}});
  write_peer_failure(source, {"absent", 1, "2026-01-01T00:00:01.000Z", "no such run", {}});
  EXPECT_EQ(record_peer_failures(*db_, source), 1);
  EXPECT_EQ(row("exit_reason"), "rank 1: first");
  EXPECT_EQ(read_peer_failures(source).size(), 3u);
}

TEST(WriterClaim, ASecondRunIsRefusedWithALineNamingTheFirst) {
  const testing::TempDir dir;
  const fs::path file = dir.path() / "shared.sqlite";
  {
    const WriterClaim first(file, "run-one");
    EXPECT_TRUE(fs::exists(writer_claim_file(file)));
    try {
      const WriterClaim second(file, "run-two");
      ADD_FAILURE() << "a second claim was granted";
    } catch (const DatabaseClaimed& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("run run-one (host "), std::string::npos) << what;
      EXPECT_NE(what.find(std::to_string(getpid())), std::string::npos) << what;
      EXPECT_NE(what.find("--db-dir"), std::string::npos) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
  }
  EXPECT_FALSE(fs::exists(writer_claim_file(file)));
  const WriterClaim after(file, "run-two");  // free again
}

TEST(WriterClaim, AClaimOfAProcessOfThisHostThatIsGoneIsTakenOver) {
  const testing::TempDir dir;
  const fs::path file = dir.path() / "shared.sqlite";
  const pid_t child = fork();
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);  // a pid that no process has now
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  std::ofstream(writer_claim_file(file))
      << "run killed\nhost " << host << "\npid " << child << "\nsince 2026-01-01T00:00:00Z\n";
  const WriterClaim claim(file, "next");
  std::ifstream in(writer_claim_file(file));
  std::string first_line;
  std::getline(in, first_line);
  EXPECT_EQ(first_line, "run next");
}

TEST(WriterClaim, AClaimOfAnotherHostIsNeverTakenOver) {
  const testing::TempDir dir;
  const fs::path file = dir.path() / "shared.sqlite";
  std::ofstream(writer_claim_file(file))
      << "run elsewhere\nhost another-node\npid 1\nsince 2026-01-01T00:00:00Z\n";
  EXPECT_THROW(WriterClaim(file, "mine"), DatabaseClaimed);
  release_writer_claim(file);  // not this process's
  EXPECT_TRUE(fs::exists(writer_claim_file(file)));
}

TEST(WriterClaim, ReleasedByTheProcessThatHoldsIt) {
  const testing::TempDir dir;
  const fs::path file = dir.path() / "shared.sqlite";
  const WriterClaim claim(file, "mine");
  release_writer_claim(file);
  EXPECT_FALSE(fs::exists(writer_claim_file(file)));
}

}  // namespace
}  // namespace commsgd::record
