// The rows of run_figures and run_overlaps (analysis/schema_v4.sql): what every report needs of a
// run, computed from its steps, epochs and ranks when they are recorded, so that a report reads
// one row per run instead of aggregating every step and pairing every rank on each query.
//
// Overlaps are found through the index on ranks (host, started_at): a span that intersects a
// rank's started no earlier than that rank's start less the longest finished span, so only
// those are looked at; spans that never finished, which have no length yet, are few and looked
// at apart.
#pragma once

#include <span>
#include <string>
#include <string_view>

struct sqlite3;

namespace commsgd::record {

// Where the two tables are: the file's own, or the TEMP copies a report makes for a file of an
// older schema, which it reads as if migrated without writing to it.
enum class FigureTables { main, temp };

// Recomputes the rows of `run_ids`: their run_figures rows, and every overlap pair either of
// whose runs is one of them. Runs that are not in the database are skipped. Throws DatabaseError
// naming `file`. The caller provides the transaction, if it wants one.
void refresh_run_figures(sqlite3* db, std::string_view file, std::span<const std::string> run_ids,
                         FigureTables tables = FigureTables::main);

// The same for every run in the database: a migration, or a report on an older file.
void refresh_all_run_figures(sqlite3* db, std::string_view file,
                             FigureTables tables = FigureTables::main);

}  // namespace commsgd::record
