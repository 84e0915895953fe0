#include "analysis/report/merge.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "analysis/record/run_database.hpp"
#include "analysis/record/run_figures.hpp"

namespace commsgd::report {
namespace {

// BEGIN IMMEDIATE: take the write lock before reading what is already there. Rolls back unless
// committed.
class Transaction {
 public:
  explicit Transaction(const Connection& db) : db_(db) { db_.exec("BEGIN IMMEDIATE"); }
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction() {
    if (!committed_) {
      try {
        db_.exec("ROLLBACK");
      } catch (const InputError&) {  // nothing to roll back: the failed statement ended it
      }
    }
  }
  void commit() {
    db_.exec("COMMIT");
    committed_ = true;
  }

 private:
  const Connection& db_;
  bool committed_ = false;
};

std::string joined(const std::vector<std::string>& items, std::string_view separator) {
  return fmt::format("{}", fmt::join(items, separator));
}

std::string placeholders(std::size_t n) {
  return joined(std::vector<std::string>(n, "?"), ", ");
}

// INSERT OR IGNORE of every row of `table`: a row whose key is already there is skipped. Here and
// below, table and column names come from the schema itself, so they are safe to put into SQL.
// Runs `insert` on every row `read` yields; returns how many rows were new.
std::int64_t insert_all(const Connection& dest, Statement& read, Statement& insert) {
  read.bind({});
  std::int64_t added = 0;
  while (read.step()) {
    insert.bind(read.row());
    insert.step();
    added += dest.changes();
  }
  return added;
}

std::int64_t copy_keyed(const Connection& dest, const Connection& source,
                        const std::string& table) {
  const std::vector<std::string> cols = dest.columns_of(table);
  Statement read(source, fmt::format("SELECT {} FROM {}", joined(cols, ", "), table));
  Statement insert(dest, fmt::format("INSERT OR IGNORE INTO {} ({}) VALUES ({})", table,
                                     joined(cols, ", "), placeholders(cols.size())));
  return insert_all(dest, read, insert);
}

// Ranks are keyed by run, rank and start; a rank that `dest` holds as unfinished takes the
// source's end and peak memory, as a run takes its final status.
std::int64_t copy_ranks(const Connection& dest, const Connection& source) {
  const std::vector<std::string> cols = dest.columns_of("ranks");
  Statement read(source, fmt::format("SELECT {} FROM ranks", joined(cols, ", ")));
  Statement insert(
      dest, fmt::format("INSERT INTO ranks ({}) VALUES ({}) ON CONFLICT (run_id, rank, started_at) "
                        "DO UPDATE SET finished_at = excluded.finished_at, peak_rss_bytes = "
                        "excluded.peak_rss_bytes WHERE ranks.finished_at IS NULL",
                        joined(cols, ", "), placeholders(cols.size())));
  return insert_all(dest, read, insert);
}

void copy_runs(const Connection& dest, const Connection& source, MergeCounts& counts) {
  const std::vector<std::string> cols = dest.columns_of("runs");
  const auto index_of = [&](std::string_view name) {
    return static_cast<std::size_t>(std::find(cols.begin(), cols.end(), name) - cols.begin());
  };
  const std::size_t id = index_of("id"), status = index_of("status");
  std::vector<std::string> assignments;
  for (const std::string& c : cols) assignments.push_back(c + " = ?");

  Statement read(source, fmt::format("SELECT {} FROM runs", joined(cols, ", ")));
  Statement insert(dest, fmt::format("INSERT OR IGNORE INTO runs ({}) VALUES ({})",
                                     joined(cols, ", "), placeholders(cols.size())));
  Statement finish(dest, fmt::format("UPDATE runs SET {} WHERE id = ? AND status = 'running' "
                                     "AND ? <> 'running'",
                                     joined(assignments, ", ")));
  read.bind({});
  while (read.step()) {
    Row row = read.row();
    insert.bind(row);
    insert.step();
    if (dest.changes() > 0) {
      ++counts.runs_added;
      continue;
    }
    const Value run_id = row[id], run_status = row[status];
    row.push_back(run_id);
    row.push_back(run_status);
    finish.bind(row);
    finish.step();
    counts.runs_updated += dest.changes();
  }
}

// Bench ids are per file: a row is the same measurement when everything but the id matches.
std::int64_t copy_bench(const Connection& dest, const Connection& source) {
  std::vector<std::string> cols = dest.columns_of("bench");
  std::erase(cols, "id");
  std::vector<std::string> numbered, same;
  for (std::size_t i = 0; i < cols.size(); ++i) {
    numbered.push_back(fmt::format("?{}", i + 1));
    same.push_back(fmt::format("{} IS ?{}", cols[i], i + 1));  // IS: NULL matches NULL
  }
  Statement read(source, fmt::format("SELECT {} FROM bench ORDER BY id", joined(cols, ", ")));
  Statement insert(dest,
                   fmt::format("INSERT INTO bench ({}) SELECT {} WHERE NOT EXISTS "
                               "(SELECT 1 FROM bench WHERE {})",
                               joined(cols, ", "), joined(numbered, ", "), joined(same, " AND ")));
  return insert_all(dest, read, insert);
}

}  // namespace

MergeCounts merge_into(const Connection& dest, const Connection& source, MergedFigures figures) {
  MergeCounts counts;
  try {
    Transaction tx(dest);
    copy_runs(dest, source, counts);  // first: the other tables reference runs
    counts.epochs = copy_keyed(dest, source, "epochs");
    counts.steps = copy_keyed(dest, source, "steps");
    counts.grad_stats = copy_keyed(dest, source, "grad_stats");
    counts.norm_study = copy_keyed(dest, source, "norm_study");
    counts.ranks = copy_ranks(dest, source);
    counts.bench = copy_bench(dest, source);
    if (figures == MergedFigures::refresh) {
      std::vector<std::string> runs;
      for (const Row& row : source.query("SELECT id FROM runs").rows)
        runs.push_back(std::get<std::string>(row.at(0)));
      record::refresh_run_figures(dest.get(), dest.name(), runs);
    }
    tx.commit();
  } catch (const InputError& e) {  // e.g. rows of a run the source does not have
    throw InputError(fmt::format("merging {}: {}", source.name(), e.what()));
  } catch (const record::DatabaseError& e) {
    throw InputError(fmt::format("merging {}: {}", source.name(), e.what()));
  }
  return counts;
}

}  // namespace commsgd::report
