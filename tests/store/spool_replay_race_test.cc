// Two commands that reach the database at once after an outage (the
// watchdog's `ras watch` and a cron `counters snapshot`) replay the same
// spool. Before the replay lock, both read a batch before either removed it:
// RAS events (kept once by a look-up, not a constraint) were stored twice,
// and the later replayer found the batch gone, called it truncated and
// stopped. Now each batch is stored once, none is set aside, and every
// replayer ends normally.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <pqxx/pqxx>
#include <sstream>
#include <thread>
#include <vector>

#include "store/spool.h"
#include "store/spool_replay.h"
#include "tests/support/test_database.h"

namespace fabtrack::store {
namespace {

using fabtrack::testing::TestDatabase;

SpoolBatch EventBatch(const SpoolTarget& target, int i) {
  SpoolBatch batch;
  batch.kind = SpoolBatch::Kind::kRas;
  batch.target = target;
  batch.ras.cluster = "lab";
  batch.ras.job_id = "70001";
  RasEvent e;
  char at[40];
  std::snprintf(at, sizeof at, "2026-12-06T10:%02d:%02d.%06dZ", i / 60 % 60, i % 60, i);
  e.received_at = at;
  e.event_time = "2026-12-06 10:00:00";
  e.group = "TRACE";
  e.event = "PEER_UNRESPONSIVE";
  e.known = true;
  e.node = "10.77.0.12";
  e.format = "text";
  e.raw = "[2026-12-06 10:00:00] PEER_UNRESPONSIVE: 10.77.0.12<5555> " + std::to_string(i);
  batch.ras.events = {e};
  return batch;
}

TEST(SpoolReplayRaceTest, ReplaysOfOneSpoolAtOnceStoreEachBatchOnce) {
  TestDatabase db;
  const std::string dir =
      ::testing::TempDir() + "/fabtrack_replay_race_" + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  Spool spool(dir);
  const SpoolTarget target = TargetOfConninfo(db.conninfo());
  constexpr int kBatches = 300;
  for (int i = 0; i < kBatches; ++i) spool.Put(EventBatch(target, i));

  constexpr int kReplayers = 3;
  std::vector<ReplayResult> results(kReplayers);
  std::vector<std::string> logs(kReplayers), errors(kReplayers);
  std::vector<std::thread> replayers;
  for (int k = 0; k < kReplayers; ++k) {
    replayers.emplace_back([&, k] {
      try {
        pqxx::connection connection(db.conninfo());
        std::ostringstream log;
        results[k] = ReplaySpool(spool, connection, target, log);
        logs[k] = log.str();
      } catch (const std::exception& e) {
        errors[k] = e.what();
      }
    });
  }
  for (std::thread& t : replayers) t.join();

  int replayed = 0;
  for (int k = 0; k < kReplayers; ++k) {
    EXPECT_EQ(errors[k], "") << "replayer " << k << " stopped";
    EXPECT_EQ(results[k].corrupt, 0) << logs[k];
    EXPECT_EQ(results[k].remaining, 0) << logs[k];
    replayed += results[k].replayed;
  }
  EXPECT_EQ(replayed, kBatches);
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM ras_events WHERE job_id = '70001'"),
            std::to_string(kBatches));
  EXPECT_TRUE(spool.Pending().empty());
  EXPECT_FALSE(std::filesystem::exists(dir + "/corrupt"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace fabtrack::store
