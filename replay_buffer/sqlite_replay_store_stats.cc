// BufferStats of the SQLite replay store, read in one snapshot.
#include <sqlite3.h>

#include <cmath>
#include <map>

#include "absl/strings/str_cat.h"
#include "replay_buffer/objective_values.h"
#include "replay_buffer/schema.h"
#include "replay_buffer/sqlite_replay_store.h"
#include "replay_buffer/sqlite_util.h"

namespace phaseloop::replay_buffer::internal {
namespace {

// Runs `sql` and calls `row` for each result row.
template <typename RowFn>
absl::Status Query(sqlite3* db, const std::string& sql, RowFn row) {
  absl::StatusOr<Statement> stmt = Statement::Prepare(db, sql.c_str());
  if (!stmt.ok()) return stmt.status();
  for (;;) {
    absl::StatusOr<bool> more = stmt->Step();
    if (!more.ok()) return more.status();
    if (!*more) return absl::OkStatus();
    row(*stmt);
  }
}

}  // namespace

absl::StatusOr<BufferStats> SqliteReplayStore::Stats() {
  absl::StatusOr<Transaction> txn = Transaction::Begin(db_, /*write=*/false);
  if (!txn.ok()) return Named(txn.status());
  BufferStats stats;
  absl::Status status = Query(db_, "PRAGMA user_version", [&](Statement& s) {
    stats.schema_version = static_cast<int32_t>(s.Int(0));
  });
  for (const char* table : kTables) {
    if (!status.ok()) break;
    status = Query(
        db_, absl::StrCat("SELECT COUNT(*) FROM ", table),
        [&](Statement& s) { stats.table_rows.emplace_back(table, s.Int(0)); });
  }
  if (status.ok()) {
    status = Query(
        db_,
        "SELECT COALESCE(m.split, ''), e.objective, e.behaviour_policy, "
        "COUNT(*), SUM(e.num_steps) FROM episodes e LEFT JOIN modules m "
        "ON m.module_hash = e.module_hash GROUP BY 1, 2, 3 ORDER BY 1, 2, 3",
        [&](Statement& s) {
          stats.episodes.push_back(
              {s.Text(0), s.Text(1), s.Text(2), s.Int(3), s.Int(4)});
        });
  }
  if (status.ok()) {
    status =
        Query(db_,
              "SELECT source, COUNT(*), AVG(value), COUNT(relative_value), "
              "COALESCE(AVG(relative_value), 0) FROM final_rewards "
              "GROUP BY source ORDER BY source",
              [&](Statement& s) {
                stats.rewards.push_back(
                    {s.Text(0), s.Int(1), s.Double(2), s.Int(3), s.Double(4)});
              });
  }
  // The best value per (module, objective) over action spaces, against Oz.
  std::map<std::string, std::pair<BufferStats::BestVsOz, double>> best;
  if (status.ok()) {
    status =
        Query(db_,
              "SELECT b.objective, MIN(b.value), m.record "
              "FROM best_sequences b JOIN modules m "
              "ON m.module_hash = b.module_hash "
              "GROUP BY b.module_hash, b.objective",
              [&](Statement& s) {
                const std::string objective = s.Text(0);
                const int64_t value = s.Int(1);
                v1::ModuleRecord module;
                const int64_t oz = module.ParseFromString(s.Text(2))
                                       ? OzValue(module, objective)
                                       : 0;
                if (value <= 0 || oz <= 0) return;
                auto& [row, log_sum] = best[objective];
                row.objective = objective;
                ++row.modules;
                if (value < oz) ++row.better_than_oz;
                log_sum += std::log(static_cast<double>(oz) / value);
              });
  }
  for (auto& [objective, entry] : best) {
    entry.first.geomean_oz_ratio =
        std::exp(entry.second / static_cast<double>(entry.first.modules));
    stats.best_vs_oz.push_back(entry.first);
  }
  if (status.ok()) {
    status =
        Query(db_,
              "SELECT outcome, reason, COUNT(*) FROM decisions "
              "GROUP BY outcome, reason ORDER BY outcome, reason",
              [&](Statement& s) {
                stats.decisions.push_back({{s.Text(0), s.Text(1)}, s.Int(2)});
              });
  }
  if (status.ok()) {
    status = Query(db_,
                   "SELECT verdict, COUNT(*) FROM miscompiles GROUP BY verdict "
                   "ORDER BY verdict",
                   [&](Statement& s) {
                     stats.miscompiles.emplace_back(s.Text(0), s.Int(1));
                   });
  }
  if (status.ok()) {
    status = Query(db_, "SELECT COUNT(*) FROM blocked_pipelines",
                   [&](Statement& s) { stats.blocked_pipelines = s.Int(0); });
  }
  if (!status.ok()) return Named(status);
  return stats;
}

}  // namespace phaseloop::replay_buffer::internal
