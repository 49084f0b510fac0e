// `fabtrack ras watch`'s storage (schema 022) in the real PostgreSQL: a
// snapshot with every field filled comes back equal, oldest first and cut to
// the newest; a verdict's first stuck time is kept (the alert's dedup key:
// first_stuck once per job); the port samples of a job's hosts over a window
// come back with the sample before it.
#include "store/ras_store.h"

#include <gtest/gtest.h>

#include <map>
#include <pqxx/pqxx>

#include "core/node_topology_json.h"
#include "store/port_writer.h"
#include "tests/support/test_database.h"

namespace fabtrack::store {
namespace {

using fabtrack::testing::TestDatabase;

RasSnapshot Snapshot(const std::string& at, int64_t count) {
  RasSnapshot s;
  s.cluster = "lab";
  s.job_id = "81234";
  s.taken_at = at;
  s.report_format = "json";
  s.nccl_version = "2.28.9";
  s.health = "warning";
  RasCommState c;
  c.id = "0x8c41e07a2f9d3b66";
  c.size = 3;
  c.state = "RUNNING";
  c.errors = "MISMATCH,DEAD";
  c.ranks = {RasRankState{0,
                          "10.12.0.5",
                          "gpu-a1",
                          "0",
                          41200,
                          "running",
                          {{"AllGather", 12}, {"AllReduce", count}}},
             RasRankState{1,
                          "10.12.0.6",
                          "",
                          "1 (NVML 3)",
                          std::nullopt,
                          "running",
                          {{"AllGather", 12}, {"AllReduce", count - 2}}},
             RasRankState{2, "10.12.0.7", "gpu-a3", "0", 38811, "dead", {}}};
  s.communicators = {c};
  return s;
}

TEST(RasStoreTest, SnapshotsRoundTripOldestFirst) {
  TestDatabase db;
  pqxx::work txn(db.connection());
  std::vector<RasSnapshot> written = {Snapshot("2026-12-05T03:12:00.000000Z", 100),
                                      Snapshot("2026-12-05T03:12:10.000000Z", 150),
                                      Snapshot("2026-12-05T03:12:20.000000Z", 150)};
  // Written out of order; a second write of one time replaces it.
  WriteRasSnapshot(txn, written[2]);
  WriteRasSnapshot(txn, written[0]);
  RasSnapshot stale = written[1];
  stale.health = "critical";
  WriteRasSnapshot(txn, stale);
  WriteRasSnapshot(txn, written[1]);
  RasSnapshot other_job = written[0];
  other_job.job_id = "99";
  WriteRasSnapshot(txn, other_job);
  EXPECT_EQ(ReadRasSnapshots(txn, "lab", "81234", "", 100), written);
  std::vector<RasSnapshot> newest = ReadRasSnapshots(txn, "lab", "81234", "", 2);
  ASSERT_EQ(newest.size(), 2u);
  EXPECT_EQ(newest[0], written[1]);
  EXPECT_DOUBLE_EQ(newest[1].taken_at_s - newest[0].taken_at_s, 10);
  EXPECT_EQ(ReadRasSnapshots(txn, "lab", "81234", "2026-12-05T03:12:15Z", 100).size(), 1u);
  EXPECT_EQ(txn.exec1("SELECT count(*) FROM ras_snapshots")[0].as<int>(), 4);
}

RasWatchVerdict Verdict(bool stuck, const std::string& last) {
  RasWatchVerdict v;
  v.health = stuck ? "critical" : "healthy";
  v.snapshots = 3;
  v.first_taken_at = "2026-12-05T03:12:00.000000Z";
  v.last_taken_at = last;
  if (stuck) {
    v.findings.push_back({"stuck",
                          "critical",
                          "0x8c41e07a2f9d3b66",
                          "no collective advanced",
                          "2026-12-05T03:12:10.000000Z",
                          {RasWatchRank{1, "10.12.0.6", "gpu-a2", "1", 41201, "AllReduce 148"}},
                          {"gpu-a2: mlx5_3 port 1 link_downed +2 at 2026-12-05T03:12:12Z"}});
  }
  return v;
}

TEST(RasStoreTest, AJobIsFirstStuckOnce) {
  TestDatabase db;
  pqxx::work txn(db.connection());
  RasVerdictWrite w =
      WriteRasJobVerdict(txn, "lab", "81234", Verdict(false, "2026-12-05T03:12:20Z"));
  EXPECT_FALSE(w.first_stuck);
  EXPECT_FALSE(w.first_stuck_at);
  w = WriteRasJobVerdict(txn, "lab", "81234", Verdict(true, "2026-12-05T03:12:30Z"));
  EXPECT_TRUE(w.first_stuck);
  EXPECT_EQ(w.first_stuck_at, "2026-12-05T03:12:30.000000Z");
  // Seen stuck again by a later watch: no new alert, the first time kept.
  w = WriteRasJobVerdict(txn, "lab", "81234", Verdict(true, "2026-12-05T03:14:00Z"));
  EXPECT_FALSE(w.first_stuck);
  EXPECT_EQ(w.first_stuck_at, "2026-12-05T03:12:30.000000Z");
  // Even after it recovered in between.
  WriteRasJobVerdict(txn, "lab", "81234", Verdict(false, "2026-12-05T03:15:00Z"));
  EXPECT_FALSE(
      WriteRasJobVerdict(txn, "lab", "81234", Verdict(true, "2026-12-05T03:16:00Z")).first_stuck);
  EXPECT_TRUE(
      WriteRasJobVerdict(txn, "lab", "77", Verdict(true, "2026-12-05T03:16:00Z")).first_stuck)
      << "another job is alerted on its own";

  std::vector<StoredRasJobVerdict> read = ReadRasJobVerdicts(txn, "lab", 0, 10);
  ASSERT_EQ(read.size(), 2u);
  EXPECT_EQ(read[0].job_id, "77");  // same time: by job id
  EXPECT_EQ(read[1].job_id, "81234");
  EXPECT_EQ(read[1].verdict, Verdict(true, "2026-12-05T03:16:00Z"));
  EXPECT_EQ(read[1].first_stuck_at, "2026-12-05T03:12:30.000000Z");
  EXPECT_EQ(ReadRasJobVerdicts(txn, "lab", 1796526960 + 3600, 10).size(), 0u);
}

// A watch's verdict spooled while the database was away and replayed after a
// later watch stored its own: the later verdict stays; the job was stuck
// first when the spooled one saw it, which is when its first stuck time is.
TEST(RasStoreTest, AnOlderVerdictReplayedLateKeepsTheNewerAndTheEarliestStuckTime) {
  TestDatabase db;
  pqxx::work txn(db.connection());
  RasWatchVerdict newer = Verdict(true, "2026-12-05T03:20:00Z");
  newer.health = "warning";
  EXPECT_TRUE(WriteRasJobVerdict(txn, "lab", "81234", newer).first_stuck);
  RasWatchVerdict older = Verdict(true, "2026-12-05T03:12:30Z");
  older.health = "critical";
  RasVerdictWrite w = WriteRasJobVerdict(txn, "lab", "81234", older);
  EXPECT_EQ(w.first_stuck_at, "2026-12-05T03:12:30.000000Z");
  std::vector<StoredRasJobVerdict> read = ReadRasJobVerdicts(txn, "lab", 0, 10);
  ASSERT_EQ(read.size(), 1u);
  EXPECT_EQ(read[0].verdict, newer) << "the later watch's verdict stays";
  EXPECT_EQ(read[0].first_stuck_at, "2026-12-05T03:12:30.000000Z");
  EXPECT_EQ(txn.exec1("SELECT to_char(judged_at AT TIME ZONE 'UTC', 'HH24:MI') FROM "
                      "ras_job_verdicts")[0]
                .as<std::string>(),
            "03:20");
}

// Replaying a spooled event twice (a crash between the commit and the
// batch's removal) stores it once.
TEST(RasStoreTest, TheSameEventWrittenTwiceIsStoredOnce) {
  TestDatabase db;
  pqxx::work txn(db.connection());
  RasEvent e;
  e.received_at = "2026-12-05T03:12:31.250000Z";
  e.event = "PEER_DEAD";
  e.format = "text";
  e.raw = "[2026-12-05 04:12:30] PEER_DEAD: Process 38811 on node 10.12.0.7 managing GPU 0";
  WriteRasEvent(txn, "lab", "81234", e);
  WriteRasEvent(txn, "lab", "81234", e);
  EXPECT_EQ(ReadRasEvents(txn, "lab", "81234", 10).size(), 1u);
  RasEvent later = e;
  later.received_at = "2026-12-05T03:12:41.250000Z";
  WriteRasEvent(txn, "lab", "81234", later);
  EXPECT_EQ(ReadRasEvents(txn, "lab", "81234", 10).size(), 2u) << "the same line read later";
}

TEST(RasStoreTest, EventsRoundTripOldestFirstAndAProcessDeadIsAlertedOnce) {
  TestDatabase db;
  pqxx::work txn(db.connection());
  RasEvent dead;
  dead.event_time = "2026-12-05 04:12:30";
  dead.received_at = "2026-12-05T03:12:31.250000Z";
  dead.group = "LIFECYCLE";
  dead.event = "PEER_DEAD";
  dead.known = true;
  dead.node = "10.12.0.7";
  dead.host = "gpu-a3";
  dead.pid = 38811;
  dead.gpus = "0 (NVML 4)";
  dead.format = "json";
  dead.raw = "{\"event\": \"PEER_DEAD\"}";
  RasEvent retry;  // an address only, and an event of a later NCCL
  retry.received_at = "2026-12-05T03:12:20.000000Z";
  retry.event = "PEER_SOMETHING_NEW";
  retry.node = "10.12.0.7";
  retry.format = "text";
  retry.details = "what a later NCCL says";
  retry.raw = "[2026-12-05 04:12:19] PEER_SOMETHING_NEW: 10.12.0.7<28028> what a later NCCL says";
  WriteRasEvent(txn, "lab", "81234", dead);
  WriteRasEvent(txn, "lab", "81234", retry);
  WriteRasEvent(txn, "lab", "other", dead);
  std::vector<RasEvent> read = ReadRasEvents(txn, "lab", "81234", 10);
  ASSERT_EQ(read.size(), 2u);
  EXPECT_EQ(read[0], retry);  // by the time read, not the order written
  dead.line = 0;
  EXPECT_EQ(read[1], dead);
  EXPECT_EQ(ReadRasEvents(txn, "lab", "81234", 1), std::vector<RasEvent>{dead}) << "the newest";

  RasWatchVerdict v = Verdict(false, "2026-12-05T03:12:40Z");
  v.health = "critical";
  v.findings.push_back({"peer_dead",
                        "critical",
                        "",
                        "1 process declared dead",
                        "2026-12-05T03:12:31.250000Z",
                        {RasWatchRank{-1, "10.12.0.7", "gpu-a3", "0", 38811, "PEER_DEAD"}},
                        {}});
  RasVerdictWrite w = WriteRasJobVerdict(txn, "lab", "81234", v);
  EXPECT_TRUE(w.first_peer_dead);
  EXPECT_EQ(w.first_peer_dead_at, "2026-12-05T03:12:40.000000Z");
  EXPECT_FALSE(w.first_stuck);
  v.last_taken_at = "2026-12-05T03:20:00Z";
  w = WriteRasJobVerdict(txn, "lab", "81234", v);
  EXPECT_FALSE(w.first_peer_dead) << "one alert per job";
  EXPECT_EQ(w.first_peer_dead_at, "2026-12-05T03:12:40.000000Z");
}

HostPorts Host(const std::string& host, int64_t link_downed, const std::string& state) {
  HostPorts h;
  h.host = host;
  PortSample p;
  p.device = "mlx5_3";
  p.port = 1;
  p.state = state;
  p.counters = {{"link_downed", static_cast<uint64_t>(link_downed)}, {"symbol_error", 0}};
  h.ports.push_back(p);
  return h;
}

TEST(RasStoreTest, PortSamplesOfTheJobsHostsOverTheWindow) {
  TestDatabase db;
  pqxx::work txn(db.connection());
  txn.exec("INSERT INTO clusters (name) VALUES ('lab')");
  WriteHostSample(txn, "lab", Host("gpu-a2", 3, "ACTIVE"), "2026-12-05T02:00:00Z", std::nullopt,
                  "snapshot");  // before the window: the baseline
  WriteHostSample(txn, "lab", Host("gpu-a2", 3, "ACTIVE"), "2026-12-05T01:00:00Z", std::nullopt,
                  "snapshot");  // older still: not read
  WriteHostSample(txn, "lab", Host("gpu-a2", 5, "DOWN"), "2026-12-05T03:12:12Z", std::nullopt,
                  "snapshot");
  WriteHostSample(txn, "lab", Host("gpu-a9", 9, "ACTIVE"), "2026-12-05T03:12:12Z", std::nullopt,
                  "snapshot");  // not the job's
  WriteHostSample(txn, "lab", Host("gpu-a2", 8, "ACTIVE"), "2026-12-05T05:00:00Z", std::nullopt,
                  "snapshot");  // after the window
  std::vector<HostPortReading> r = ReadHostPortReadings(
      txn, "lab", {"gpu-a2", "gpu-a1"}, "2026-12-05T03:12:00Z", "2026-12-05T03:13:00Z");
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].sampled_at, "2026-12-05T02:00:00Z");
  EXPECT_EQ(r[1].sampled_at, "2026-12-05T03:12:12Z");
  EXPECT_EQ(r[1].host, "gpu-a2");
  EXPECT_EQ(r[1].device, "mlx5_3");
  EXPECT_EQ(r[1].state, "DOWN");
  std::map<std::string, std::optional<int64_t>> counters(r[1].counters.begin(),
                                                         r[1].counters.end());
  EXPECT_EQ(counters["link_downed"], 5);
  EXPECT_EQ(counters["symbol_error"], 0);
  EXPECT_EQ(counters.count("port_rcv_errors"), 1u);
  EXPECT_FALSE(counters["port_rcv_errors"]) << "not read: absent, not zero";
}

TEST(RasStoreTest, WhatIsKnownOfTheJobsHostsByTheWindowsEnd) {
  TestDatabase db;
  pqxx::work txn(db.connection());
  txn.exec("INSERT INTO clusters (name) VALUES ('lab')");
  // gpu-a2's wiring as ingested three times: the newest by the window's end
  // counts, not one ingested after it; gpu-a9 is not the job's.
  auto topology = [&](const std::string& host, const std::string& at, const std::string& nic,
                      const std::string& fingerprint) {
    NodeTopology t;
    TopoGpu g;
    g.name = "GPU0";
    g.nic = nic;
    t.gpus = {g};
    TopoNic n;
    n.name = nic;
    t.nics = {n};
    txn.exec_params0(
        "INSERT INTO node_topologies (cluster, host, recorded_at, format, fingerprint, topology) "
        "VALUES ('lab', $1, $2::timestamptz, 'nccl_xml', $3, $4::jsonb)",
        host, at, fingerprint, NodeTopologyToJson(t).dump());
  };
  topology("gpu-a2", "2026-12-05T01:00:00Z", "mlx5_0", "f-old");
  topology("gpu-a2", "2026-12-05T02:00:00Z", "mlx5_3", "f-new");
  topology("gpu-a2", "2026-12-05T04:00:00Z", "mlx5_9", "f-later");
  topology("gpu-a9", "2026-12-05T02:00:00Z", "mlx5_1", "f-a9");
  HostPorts a2 = Host("gpu-a2", 1, "ACTIVE");
  a2.ports[0].fw_version = "28.40.1000";
  a2.ports[0].rate_gbps = 200;
  WriteHostSample(txn, "lab", a2, "2026-12-05T03:12:12Z", std::nullopt, "snapshot");
  HostPorts a1 = Host("gpu-a1", 1, "ACTIVE");
  a1.ports[0].fw_version = "28.39.1002";
  WriteHostSample(txn, "lab", a1, "2026-12-05T03:12:12Z", std::nullopt, "snapshot");
  RasHostKnowledge known = ReadRasHostKnowledge(txn, "lab", {"gpu-a1", "gpu-a2"},
                                                {"gpu-a2", "gpu-a9"}, "2026-12-05T03:13:00Z");
  ASSERT_EQ(known.topologies.size(), 1u);
  ASSERT_EQ(known.topologies.count("gpu-a2"), 1u);
  EXPECT_EQ(known.topologies["gpu-a2"].gpus.at(0).nic, "mlx5_3");
  EXPECT_EQ(known.facts["gpu-a2"], (std::map<std::string, std::string>{
                                       {"fw_ver mlx5_3", "28.40.1000"}, {"topology", "f-new"}}));
  EXPECT_EQ(known.facts["gpu-a1"],
            (std::map<std::string, std::string>{{"fw_ver mlx5_3", "28.39.1002"}}));
  EXPECT_EQ(known.facts.count("gpu-a9"), 0u);
  // A host the verdict does not name: its fingerprint, not its topology.
  topology("gpu-a1", "2026-12-05T02:00:00Z", "mlx5_5", "f-a1");
  known =
      ReadRasHostKnowledge(txn, "lab", {"gpu-a1", "gpu-a2"}, {"gpu-a2"}, "2026-12-05T03:13:00Z");
  EXPECT_EQ(known.topologies.count("gpu-a1"), 0u);
  EXPECT_EQ(known.facts["gpu-a1"]["topology"], "f-a1");
  EXPECT_EQ(known.topologies.count("gpu-a2"), 1u);
  std::vector<HostPortReading> r = ReadHostPortReadings(
      txn, "lab", {"gpu-a2", "gpu-a1"}, "2026-12-05T03:12:00Z", "2026-12-05T03:13:00Z");
  ASSERT_EQ(r.size(), 2u);
  for (const HostPortReading& reading : r) {
    if (reading.host == "gpu-a2") EXPECT_EQ(reading.rate_gbps, 200.0);
    if (reading.host == "gpu-a1") EXPECT_EQ(reading.rate_gbps, std::nullopt) << "not sampled";
  }
}

}  // namespace
}  // namespace fabtrack::store
