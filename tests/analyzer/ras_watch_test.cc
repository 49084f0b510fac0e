// `fabtrack ras watch`'s verdict over consecutive RAS snapshots: a stuck
// communicator named within two snapshots, laggards at 1%, 25% and 60% of
// the ranks, dead and unresponsive ranks, and the port counters of their
// hosts over the window.
#include "analyzer/ras_watch.h"

#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>

namespace fabtrack::analyzer {
namespace {

RasRankState Rank(int rank, int64_t all_reduce, std::string state = "running") {
  RasRankState k;
  k.rank = rank;
  k.node = "10.9.0." + std::to_string(rank / 8 + 1);
  k.host = "gpu-n" + std::to_string(rank / 8 + 1);
  k.gpu = std::to_string(rank % 8);
  k.pid = 5000 + rank;
  k.state = std::move(state);
  k.op_counts = {{"AllGather", 3}, {"AllReduce", all_reduce}};
  return k;
}

// A communicator of `size` ranks, all at `count` AllReduces but those in `behind` at count - 2.
RasCommState Comm(const std::string& id, int size, int64_t count,
                  const std::set<int>& behind = {}) {
  RasCommState c;
  c.id = id;
  c.size = size;
  c.state = "RUNNING";
  c.errors = behind.empty() ? "OK" : "MISMATCH";
  for (int r = 0; r < size; ++r) c.ranks.push_back(Rank(r, behind.count(r) ? count - 2 : count));
  return c;
}

RasSnapshot Snap(int second, std::vector<RasCommState> comms) {
  RasSnapshot s;
  s.cluster = "lab";
  s.job_id = "4242";
  s.taken_at =
      "2026-12-05T03:12:" + std::string(second < 10 ? "0" : "") + std::to_string(second) + "Z";
  s.taken_at_s = 1796526720 + second;
  s.report_format = "json";
  s.communicators = std::move(comms);
  return s;
}

const RasWatchFinding* Find(const RasWatchVerdict& v, const std::string& kind) {
  for (const RasWatchFinding& f : v.findings) {
    if (f.kind == kind) return &f;
  }
  return nullptr;
}

std::set<int> RanksOf(const RasWatchFinding& f) {
  std::set<int> out;
  for (const RasWatchRank& k : f.ranks) out.insert(k.rank);
  return out;
}

TEST(RasWatchTest, AdvancingCountsAreHealthy) {
  RasWatchVerdict v =
      JudgeRasWatch({Snap(0, {Comm("0xa1", 16, 100)}), Snap(10, {Comm("0xa1", 16, 180)}),
                     Snap(20, {Comm("0xa1", 16, 260)})});
  EXPECT_EQ(v.health, "healthy");
  EXPECT_TRUE(v.findings.empty());
  EXPECT_EQ(v.snapshots, 3);
  EXPECT_EQ(v.first_taken_at, "2026-12-05T03:12:00Z");
  EXPECT_EQ(v.last_taken_at, "2026-12-05T03:12:20Z");
}

TEST(RasWatchTest, FrozenMismatchIsStuckWithinTwoSnapshots) {
  // Advancing, then frozen at 300 with rank 17 two behind.
  std::vector<RasSnapshot> s = {Snap(0, {Comm("0xa1", 32, 200)}),
                                Snap(10, {Comm("0xa1", 32, 300, {17})})};
  EXPECT_EQ(Find(JudgeRasWatch(s), "stuck"), nullptr) << "one snapshot of the freeze is not stuck";
  s.push_back(Snap(20, {Comm("0xa1", 32, 300, {17})}));
  RasWatchVerdict v = JudgeRasWatch(s);
  const RasWatchFinding* stuck = Find(v, "stuck");
  ASSERT_NE(stuck, nullptr);
  EXPECT_EQ(v.health, "critical");
  EXPECT_EQ(stuck->communicator, "0xa1");
  EXPECT_EQ(stuck->since, "2026-12-05T03:12:10Z");
  EXPECT_EQ(RanksOf(*stuck), std::set<int>({17}));
  EXPECT_EQ(stuck->ranks[0].host, "gpu-n3");
  EXPECT_EQ(stuck->ranks[0].detail, "AllReduce 298, others at 300");
  EXPECT_NE(stuck->message.find("1 of 32 ranks behind hold it"), std::string::npos)
      << stuck->message;
  // Resumes: no longer stuck.
  s.push_back(Snap(30, {Comm("0xa1", 32, 400)}));
  EXPECT_EQ(Find(JudgeRasWatch(s), "stuck"), nullptr);
}

TEST(RasWatchTest, AnIdleCommunicatorBesideABusyOneIsNotStuck) {
  RasWatchVerdict v = JudgeRasWatch({Snap(0, {Comm("0xa1", 8, 100), Comm("0xb2", 8, 4)}),
                                     Snap(10, {Comm("0xa1", 8, 150), Comm("0xb2", 8, 4)})});
  EXPECT_EQ(Find(v, "stuck"), nullptr);
  EXPECT_EQ(v.health, "healthy");
}

TEST(RasWatchTest, EveryCommunicatorFrozenInAgreementIsStuck) {
  // Hung inside an operation every rank launched: nothing advances anywhere.
  RasWatchVerdict v = JudgeRasWatch({Snap(0, {Comm("0xa1", 8, 100), Comm("0xb2", 8, 4)}),
                                     Snap(10, {Comm("0xa1", 8, 100), Comm("0xb2", 8, 4)})});
  int stuck = 0;
  for (const RasWatchFinding& f : v.findings) stuck += f.kind == "stuck";
  EXPECT_EQ(stuck, 2);
  EXPECT_TRUE(v.Stuck());
}

TEST(RasWatchTest, AFrozenTextMismatchNamesTheRanksRasNamed) {
  // The text report gives counts only for the ranks that differ (its
  // MISMATCH block); the others are elsewhere, so the freeze is a stuck one
  // even beside a communicator that advances.
  RasCommState text;
  text.id = "b41f07c2d9e38a16";
  text.size = 32;
  text.state = "RUNNING";
  text.errors = "MISMATCH";
  for (int r : {8, 9}) {
    RasRankState k = Rank(r, 0);
    k.op_counts = {{"collective", 12039}};
    text.ranks.push_back(k);
  }
  RasWatchVerdict v = JudgeRasWatch(
      {Snap(0, {text, Comm("0xa1", 8, 100)}), Snap(10, {text, Comm("0xa1", 8, 180)})});
  const RasWatchFinding* stuck = Find(v, "stuck");
  ASSERT_NE(stuck, nullptr);
  EXPECT_EQ(stuck->communicator, "b41f07c2d9e38a16");
  EXPECT_EQ(RanksOf(*stuck), std::set<int>({8, 9}));
  EXPECT_EQ(stuck->ranks[0].detail, "collective 12039, others elsewhere");
  EXPECT_NE(stuck->message.find("RAS names 2 ranks at other counts"), std::string::npos)
      << stuck->message;
}

TEST(RasWatchTest, FinalizingCommunicatorsAreNotStuck) {
  RasCommState a = Comm("0xa1", 8, 100, {3});
  a.state = "FINALIZE";
  RasWatchVerdict v = JudgeRasWatch({Snap(0, {a}), Snap(10, {a})});
  EXPECT_EQ(Find(v, "stuck"), nullptr);
}

// Laggards are named however many they are: RAS's own text report lists
// individual ranks only when few are off.
class LaggardProportion : public ::testing::TestWithParam<int> {};

TEST_P(LaggardProportion, EveryRankBehindIsNamed) {
  int behind_count = GetParam();
  std::set<int> behind;
  for (int r = 0; r < behind_count; ++r) behind.insert((r * 37 + 5) % 100);
  ASSERT_EQ(static_cast<int>(behind.size()), behind_count);
  RasWatchVerdict v = JudgeRasWatch(
      {Snap(0, {Comm("0xc3", 100, 500, behind)}), Snap(10, {Comm("0xc3", 100, 700, behind)})});
  const RasWatchFinding* laggard = Find(v, "laggard");
  ASSERT_NE(laggard, nullptr);
  EXPECT_EQ(RanksOf(*laggard), behind);
  EXPECT_EQ(laggard->message,
            "AllReduce: " + std::to_string(behind_count) + " of 100 ranks behind");
  EXPECT_EQ(v.health, "warning");
  EXPECT_EQ(Find(v, "stuck"), nullptr);
}

INSTANTIATE_TEST_SUITE_P(OnePercentQuarterAndMost, LaggardProportion, ::testing::Values(1, 25, 60));

// Seconds to judge two frozen snapshots of `size` ranks, 60% behind.
double JudgeSeconds(int size) {
  std::set<int> behind;
  for (int r = 0; r < size; ++r) {
    if (r % 5 < 3) behind.insert(r);
  }
  RasCommState c = Comm("0xb16", size, 900, behind);
  auto start = std::chrono::steady_clock::now();
  RasWatchVerdict v = JudgeRasWatch({Snap(0, {c}), Snap(10, {c})});
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const RasWatchFinding* stuck = Find(v, "stuck");
  const RasWatchFinding* laggard = Find(v, "laggard");
  EXPECT_TRUE(stuck != nullptr && stuck->ranks.size() == behind.size());
  EXPECT_TRUE(laggard != nullptr && laggard->ranks.size() == behind.size());
  return took;
}

// A job of 10^5 ranks, most of them behind and frozen, is judged in time
// that grows with the ranks, not with their square (each rank found by its
// number, not by a scan of the communicator per rank behind: 6 * 10^9
// steps, 17.7 s). Ten times the ranks: about ten times the time (was ~70);
// a ratio, so that a loaded machine slows both alike.
TEST(RasWatchTest, ABigJobMostlyBehindIsJudgedInLinearTime) {
  double small = JudgeSeconds(10000);
  double big = JudgeSeconds(100000);
  std::cout << "judged 10^4 ranks in " << small << " s, 10^5 in " << big << " s\n";
  EXPECT_LT(big, 30 * small);
}

TEST(RasWatchTest, ARankBehindForOneSnapshotOnlyIsNoLaggard) {
  RasWatchVerdict v = JudgeRasWatch(
      {Snap(0, {Comm("0xc3", 16, 500, {4})}), Snap(10, {Comm("0xc3", 16, 700, {9})})});
  const RasWatchFinding* laggard = Find(v, "laggard");
  EXPECT_EQ(laggard, nullptr) << "rank 9 was behind once, rank 4 caught up";
}

TEST(RasWatchTest, ADyingRankIsNamedSinceItsFirstSnapshot) {
  RasCommState alive = Comm("0xd4", 16, 100);
  RasCommState dying = Comm("0xd4", 16, 150);
  dying.ranks[9].state = "unresponsive";
  dying.ranks[9].op_counts.clear();
  RasCommState dead = dying;
  dead.ranks[9].state = "dead";
  dead.errors = "INCOMPLETE";
  RasWatchVerdict v =
      JudgeRasWatch({Snap(0, {alive}), Snap(10, {dying}), Snap(20, {dead}), Snap(30, {dead})});
  const RasWatchFinding* f = Find(v, "dead");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, "critical");
  EXPECT_EQ(f->since, "2026-12-05T03:12:20Z");
  EXPECT_EQ(RanksOf(*f), std::set<int>({9}));
  EXPECT_EQ(f->message, "1 rank of 16 dead");
  EXPECT_EQ(Find(v, "unresponsive"), nullptr);
  // The others froze at 150 once rank 9 stopped: every communicator frozen.
  EXPECT_NE(Find(v, "stuck"), nullptr);
  // Two snapshots earlier it was only unresponsive.
  RasWatchVerdict earlier = JudgeRasWatch({Snap(0, {alive}), Snap(10, {dying})});
  ASSERT_NE(Find(earlier, "unresponsive"), nullptr);
  EXPECT_EQ(Find(earlier, "unresponsive")->since, "2026-12-05T03:12:10Z");
}

TEST(RasWatchTest, ARankWithAnErrorIsSaidSo) {
  RasCommState c = Comm("0xe1", 8, 100);
  c.ranks[6].state = "error";
  c.errors = "ERROR";
  RasWatchVerdict v = JudgeRasWatch({Snap(0, {c})});
  const RasWatchFinding* f = Find(v, "error");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(RanksOf(*f), std::set<int>({6}));
  EXPECT_EQ(f->message, "1 rank of 8 with an error");
}

HostPortReading Reading(const std::string& host, const std::string& device, int second,
                        int64_t link_downed, const std::string& state = "ACTIVE") {
  HostPortReading r;
  r.host = host;
  r.device = device;
  r.port = 1;
  r.sampled_at =
      "2026-12-05T03:12:" + std::string(second < 10 ? "0" : "") + std::to_string(second) + "Z";
  r.sampled_at_s = second;
  r.state = state;
  r.counters = {{"link_downed", link_downed}, {"symbol_error", std::nullopt}};
  return r;
}

TEST(RasWatchTest, PortCountersOfTheRanksHostsJoinTheFinding) {
  std::vector<RasSnapshot> s = {Snap(0, {Comm("0xa1", 32, 300, {17})}),
                                Snap(10, {Comm("0xa1", 32, 300, {17})})};
  RasWatchVerdict v = JudgeRasWatch(s);
  std::vector<HostPortReading> readings = {
      Reading("gpu-n3", "mlx5_3", 12, 7, "DOWN"), Reading("gpu-n3", "mlx5_3", 0, 5),
      Reading("gpu-n3", "mlx5_0", 0, 1),          Reading("gpu-n3", "mlx5_0", 12, 1),
      Reading("gpu-n4", "mlx5_3", 0, 0),          Reading("gpu-n4", "mlx5_3", 12, 9),
      Reading("gpu-n3", "mlx5_5", 0, 9),          Reading("gpu-n3", "mlx5_5", 12, 2)};
  AttachPortChanges(readings, &v);
  const RasWatchFinding* stuck = Find(v, "stuck");
  ASSERT_NE(stuck, nullptr);
  EXPECT_EQ(
      stuck->port_changes,
      std::vector<std::string>({"gpu-n3: mlx5_3 port 1 ACTIVE -> DOWN at 2026-12-05T03:12:12Z",
                                "gpu-n3: mlx5_3 port 1 link_downed +2 at 2026-12-05T03:12:12Z"}))
      << "gpu-n4 holds no named rank; mlx5_5 was reset, not errored";
}

TEST(RasWatchTest, VerdictRoundTripsThroughJson) {
  RasWatchVerdict v = JudgeRasWatch(
      {Snap(0, {Comm("0xa1", 32, 300, {17})}), Snap(10, {Comm("0xa1", 32, 300, {17})})});
  v.findings[0].port_changes = {"gpu-n3: mlx5_3 port 1 link_downed +2 at 2026-12-05T03:12:12Z"};
  v.findings[0].node_facts = {
      "gpu-n3: fw_ver mlx5_3 28.40.1000; 28.39.1002 on the job's other 3 hosts"};
  v.findings[0].ranks[0].nic = "mlx5_3";
  v.findings[0].ranks[0].pid.reset();
  EXPECT_EQ(RasWatchVerdictFromJson(nlohmann::json::parse(RasWatchVerdictJson(v).dump())), v);
  // A verdict stored before NICs and node facts were named still reads.
  nlohmann::json old = RasWatchVerdictJson(v);
  old["findings"][0].erase("node_facts");
  for (nlohmann::json& k : old["findings"][0]["ranks"]) k.erase("nic");
  RasWatchVerdict before = RasWatchVerdictFromJson(old);
  EXPECT_TRUE(before.findings[0].node_facts.empty());
  EXPECT_EQ(before.findings[0].ranks[0].nic, "");
  std::vector<RasCommState> comms = {Comm("0xa1", 4, 9, {2})};
  comms[0].ranks[1].pid.reset();
  EXPECT_EQ(RasCommunicatorsFromJson(nlohmann::json::parse(RasCommunicatorsJson(comms).dump())),
            comms);
}

RasEvent Event(const std::string& event, const std::string& node, std::optional<int64_t> pid,
               const std::string& received_at) {
  RasEvent e;
  e.event = event;
  e.node = node;
  e.pid = pid;
  e.gpus = pid ? "1" : "";
  e.port = pid ? "" : "28028";
  e.event_time = "2026-12-05 04:12:30";
  e.received_at = received_at;
  return e;
}

TEST(RasWatchTest, APeerDeadEventNamesTheProcessAtOnceWithItsRanks) {
  // The snapshot still shows every rank running: RAS's status says dead
  // only after 60 s; the event already did.
  std::vector<RasSnapshot> snaps = {Snap(0, {Comm("0xa1", 16, 300)}),
                                    Snap(10, {Comm("0xa1", 16, 310)})};
  EXPECT_EQ(JudgeRasWatch(snaps, {Event("PEER_UNRESPONSIVE", "10.9.0.2", 5009, "b")}).health,
            "healthy");
  std::vector<RasEvent> events = {
      Event("PEER_UNRESPONSIVE", "10.9.0.2", 5009, "2026-12-05T03:12:04Z"),
      Event("PEER_DEAD", "10.9.0.2", 5009, "2026-12-05T03:12:05Z"),
      Event("PEER_DEAD", "10.9.0.2", 5009, "2026-12-05T03:12:06Z"),           // told twice: once
      Event("PEER_DEAD", "10.9.0.7", std::nullopt, "2026-12-05T03:12:07Z")};  // address only
  RasWatchVerdict v = JudgeRasWatch(snaps, events);
  EXPECT_EQ(v.health, "critical");
  EXPECT_TRUE(v.PeerDead());
  EXPECT_FALSE(v.Stuck());
  ASSERT_FALSE(v.findings.empty());
  const RasWatchFinding& f = v.findings[0];  // first: what the alert says
  EXPECT_EQ(f.kind, "peer_dead");
  EXPECT_EQ(f.severity, "critical");
  EXPECT_EQ(f.since, "2026-12-05T03:12:05Z");
  EXPECT_EQ(f.message, "2 processes declared dead by RAS's event stream");
  ASSERT_EQ(f.ranks.size(), 2u);
  EXPECT_EQ(f.ranks[0].rank, -1);
  EXPECT_EQ(f.ranks[0].host, "gpu-n2");  // from the snapshot's rank of that process
  EXPECT_EQ(f.ranks[0].pid, 5009);
  EXPECT_EQ(f.ranks[0].detail, "PEER_DEAD at 2026-12-05 04:12:30 (RAS's clock), rank 9 of 0xa1");
  EXPECT_EQ(f.ranks[1].node, "10.9.0.7");
  EXPECT_EQ(f.ranks[1].detail, "PEER_DEAD at 2026-12-05 04:12:30 (RAS's clock)");
  EXPECT_EQ(RasWatchVerdictFromJson(nlohmann::json::parse(RasWatchVerdictJson(v).dump())), v);
}

}  // namespace
}  // namespace fabtrack::analyzer
