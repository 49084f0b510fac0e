// A spooled batch that recorded its database's instance id (migration 008)
// is never stored into a database that answers to the same name but is
// another instance (a rebuilt server, another cluster behind the same DNS
// name); the operator's `spool replay --target` (adopt) may move it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>

#include "core/content_hash.h"
#include "store/spool.h"
#include "store/spool_replay.h"
#include "tests/support/test_database.h"

namespace fabtrack::store {
namespace {

using fabtrack::testing::TestDatabase;

SpoolBatch BatchFor(const SpoolTarget& target, const std::string& instance,
                    const std::string& tag) {
  SpoolBatch batch;
  batch.target = target;
  batch.instance_id = instance;
  RunRecord& run = batch.run;
  run.cluster = "lab";
  run.started_at = "2026-12-04T02:00:00Z";
  run.ended_at = "2026-12-04T02:01:00Z";
  run.source = "fabtrack-allreduce";
  run.backend = "mpi";
  run.collective = "all_reduce";
  run.dtype = "float";
  run.ranks = 2;
  run.nodes = 1;
  run.hosts = {"node01"};
  run.content_hash = Sha256Hex("instance-test-" + tag);
  run.status = RunStatus::kComplete;
  ResultRow r;
  r.row.size_bytes = 8;
  r.row.count = 2;
  r.row.type = "float";
  r.row.oop = Measurement{.time_us = 10.5, .algbw_gbps = 1.25, .busbw_gbps = 2.5};
  run.results.push_back(r);
  return batch;
}

TEST(SpoolInstanceTest, ABatchOfAnotherInstanceStaysOutUnlessAdopted) {
  TestDatabase db;
  const std::string here = ReadInstanceId(db.connection());
  ASSERT_EQ(here.size(), 36u) << "migration 008 gives every database a uuid";
  const std::string dir =
      ::testing::TempDir() + "/fabtrack_instance_spool_" + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  Spool spool(dir);
  const SpoolTarget target = TargetOfConninfo(db.conninfo());
  spool.Put(BatchFor(target, "00000000-0000-4000-8000-000000000000", "foreign"));
  spool.Put(BatchFor(target, here, "same"));
  spool.Put(BatchFor(target, "", "unseen"));  // spooled before the database was ever reached

  std::ostringstream log;
  ReplayResult r = ReplaySpool(spool, db.connection(), target, log);
  EXPECT_EQ(r.replayed, 2) << log.str();
  EXPECT_EQ(r.foreign, 1) << log.str();
  EXPECT_NE(log.str().find("not stored here"), std::string::npos) << log.str();
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM runs"), "2");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM runs WHERE content_hash = '" +
                      Sha256Hex("instance-test-foreign") + "'"),
            "0");
  ASSERT_EQ(spool.Pending(target).size(), 1u);

  r = ReplaySpool(spool, db.connection(), target, log, /*adopt=*/true);
  EXPECT_EQ(r.replayed, 1);
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM runs"), "3");
  EXPECT_TRUE(spool.Pending().empty());
  std::filesystem::remove_all(dir);
}

TEST(SpoolInstanceTest, TargetsResolveLikeLibpqWithoutSecrets) {
  const SpoolTarget t =
      TargetOfConninfo("host=db01.example port=6432 dbname=fabtrack user=writer password=hunter2");
  EXPECT_EQ(t.Describe(), "writer@db01.example:6432/fabtrack");
  // Later keywords win, as in libpq; a URI names the same target.
  EXPECT_EQ(TargetOfConninfo("host=a dbname=x user=u port=1 dbname=fabtrack host=db01.example "
                             "port=6432 user=writer"),
            t);
  EXPECT_EQ(TargetOfConninfo("postgresql://writer:hunter2@db01.example:6432/fabtrack"), t);
  SpoolTarget back;
  ASSERT_TRUE(ParseTargetDescription(t.Describe(), &back));
  EXPECT_EQ(back, t);
  ASSERT_TRUE(ParseTargetDescription("u@/var/run/postgresql:5432/fabtrack", &back));
  EXPECT_EQ(back.host, "/var/run/postgresql");
  EXPECT_FALSE(ParseTargetDescription("no-at-sign", &back));
  EXPECT_TRUE(ParseTargetDescription("unknown", &back));
  EXPECT_TRUE(back.Unknown());
}

}  // namespace
}  // namespace fabtrack::store
