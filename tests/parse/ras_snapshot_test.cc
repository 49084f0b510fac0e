// What `ras watch` keeps of a RAS report (collector/ras/ras_snapshot.h): the
// JSON report's every rank with its state and counts, missing ranks marked
// dead; the text report's named ranks with their group's count and the
// communicator's state from the table; hosts(5) files mapping node IPs to
// hosts, with a bad line named by file:line.
#include "collector/ras/ras_snapshot.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

#include "tests/support/fixture_text.h"

namespace fabtrack::ras {
namespace {

std::string Fixture(const std::string& name) { return testing::FixtureText("ras/" + name); }

// RasCommunicatorsDump writes what RasCommunicatorsJson(...).dump() writes,
// byte for byte: compact (stored) and pretty at a depth (printed), empty
// containers, a rank without pid or counts; and through the DOM where a
// string needs escaping (a quote, a control character, invalid UTF-8).
TEST(RasSnapshot, CommunicatorsDumpIsTheDomsDump) {
  RasRankState a{3,
                 "10.0.0.1",
                 "gpu-n1",
                 "1 (NVML 3)",
                 4242,
                 "running",
                 {{"AllReduce", 977}, {"Broadcast", -1}}};
  RasRankState b{4, "", "", "", std::nullopt, "", {}};
  RasCommState full{"0x8c41e07a2f9d3b66", 2, "RUNNING", "MISMATCH,INCOMPLETE", {a, b}};
  RasCommState none{"#0-0 (27a0)", 0, "", "OK", {}};
  using H = nlohmann::json::error_handler_t;
  auto nested = [](const std::string& text, size_t prefix) {
    std::string out;
    for (char c : text) {
      out.push_back(c);
      if (c == '\n') out.append(prefix, ' ');
    }
    return out;
  };
  std::vector<std::vector<RasCommState>> cases = {{}, {none}, {full, none}};
  RasCommState quoted = full;
  quoted.ranks[0].host = "gpu\"n1\t";
  RasCommState broken = full;
  broken.ranks[1].node = "10.0.0.\xff";
  cases.push_back({quoted});
  for (const auto& comms : cases) {
    nlohmann::json dom = RasCommunicatorsJson(comms);
    EXPECT_EQ(RasCommunicatorsDump(comms), dom.dump());
    EXPECT_EQ(RasCommunicatorsDump(comms, 2), dom.dump(2));
    EXPECT_EQ(RasCommunicatorsDump(comms, 2, 6, H::replace),
              nested(dom.dump(2, ' ', false, H::replace), 6));
  }
  EXPECT_THROW(RasCommunicatorsDump({broken}), nlohmann::json::exception);
  EXPECT_EQ(RasCommunicatorsDump({broken}, 2, 4, H::replace),
            nested(RasCommunicatorsJson({broken}).dump(2, ' ', false, H::replace), 4));
}

// RasWatchVerdictDump, the same for the verdict: no findings, findings with
// and without ranks and port changes, and a string that needs escaping.
TEST(RasSnapshot, VerdictDumpIsTheDomsDump) {
  RasWatchVerdict v;
  v.snapshots = 2;
  v.first_taken_at = "2026-12-06T14:00:00Z";
  v.last_taken_at = "2026-12-06T14:00:30Z";
  std::vector<RasWatchVerdict> cases = {v};
  v.health = "critical";
  v.findings.push_back({"stuck",
                        "critical",
                        "0x1",
                        "no collective advanced",
                        "2026-12-06T14:00:00Z",
                        {{3, "10.0.0.1", "gpu-n1", "1", 4242, "AllReduce 975, others at 977"},
                         {4, "", "", "", std::nullopt, ""}},
                        {"gpu-n1: mlx5_3 port 1 link_downed +2 at 2026-12-06T14:00:10Z"}});
  v.findings.push_back({"laggard", "warning", "", "none", "", {}, {}});
  cases.push_back(v);
  // A rank's NIC and the hosts' facts (empty in the cases above).
  v.findings[0].ranks[0].nic = "mlx5_3";
  v.findings[0].node_facts = {
      "gpu-n1: link mlx5_3/1 200 Gb/s; 400 Gb/s on the job's other 3 hosts"};
  cases.push_back(v);
  v.findings[0].message = "caf\xc3\xa9 \"quoted\"";
  v.findings[0].node_facts.push_back("gpu-n1: fw_ver mlx5_3 caf\xc3\xa9; 28.39 on 1 of 3");
  cases.push_back(v);
  using H = nlohmann::json::error_handler_t;
  for (const RasWatchVerdict& c : cases) {
    nlohmann::json dom = RasWatchVerdictJson(c);
    EXPECT_EQ(RasWatchVerdictDump(c), dom.dump());
    EXPECT_EQ(RasWatchVerdictDump(c, 2), dom.dump(2));
    std::string nested;
    for (char ch : dom.dump(2, ' ', false, H::replace)) {
      nested.push_back(ch);
      if (ch == '\n') nested.append(2, ' ');
    }
    EXPECT_EQ(RasWatchVerdictDump(c, 2, 2, H::replace), nested);
  }
}

TEST(RasSnapshot, JsonReportKeepsEveryRankAndMarksTheDeadOne) {
  std::vector<RasCommState> comms = CommunicatorsOf(ParseRasJson(Fixture("missing_rank.json")));
  ASSERT_EQ(comms.size(), 1u);
  const RasCommState& c = comms[0];
  EXPECT_EQ(c.id, "0x8c41e07a2f9d3b66");
  EXPECT_EQ(c.size, 4);
  EXPECT_EQ(c.state, "RUNNING");
  EXPECT_EQ(c.errors, "DEAD,MISMATCH");
  ASSERT_EQ(c.ranks.size(), 4u);
  EXPECT_EQ(c.ranks[2].rank, 2);
  EXPECT_EQ(c.ranks[2].node, "10.12.0.6");
  EXPECT_EQ(c.ranks[2].pid, 38811);
  EXPECT_EQ(c.ranks[2].state, "running");
  ASSERT_EQ(c.ranks[2].op_counts.size(), 5u);
  EXPECT_EQ(c.ranks[2].op_counts[4], (std::pair<std::string, int64_t>("AllReduce", 975)));
  EXPECT_EQ(c.ranks[3].state, "dead");
  EXPECT_EQ(c.ranks[3].gpu, "1");
  EXPECT_TRUE(c.ranks[3].op_counts.empty());
  EXPECT_EQ(NodesOf(comms), std::vector<std::string>({"10.12.0.5", "10.12.0.6"}));

  std::vector<RasCommState> mapped = comms;
  MapHosts({{"10.12.0.6", "gpu-b2"}}, &mapped);
  EXPECT_EQ(mapped[0].ranks[3].host, "gpu-b2");
  EXPECT_EQ(mapped[0].ranks[0].host, "");
}

TEST(RasSnapshot, TextReportKeepsTheNamedRanksWithTheirCounts) {
  std::vector<RasCommState> comms = CommunicatorsOf(ParseRasText(Fixture("mismatch.txt")));
  ASSERT_EQ(comms.size(), 1u);
  const RasCommState& c = comms[0];
  EXPECT_EQ(c.id, "b41f07c2d9e38a16");
  EXPECT_EQ(c.size, 32);
  EXPECT_EQ(c.state, "RUNNING");
  EXPECT_EQ(c.errors, "MISMATCH");
  // The 4 ranks RAS names, and the 28 of the unnamed group with its count.
  ASSERT_EQ(c.ranks.size(), 32u);
  EXPECT_EQ(c.ranks[13].rank, 13);
  EXPECT_EQ(c.ranks[13].gpu, "5 (NVML 6)");
  EXPECT_EQ(c.ranks[13].node, "192.168.20.12");
  EXPECT_EQ(c.ranks[13].op_counts,
            (std::vector<std::pair<std::string, int64_t>>{{"collective", 12039}}));
  EXPECT_EQ(c.ranks[27].rank, 27);
  EXPECT_FALSE(c.ranks[27].pid);
  EXPECT_EQ(c.ranks[12].rank, 12);
  EXPECT_EQ(c.ranks[12].node, "");
  EXPECT_EQ(c.ranks[12].op_counts,
            (std::vector<std::pair<std::string, int64_t>>{{"collective", 12041}}));
}

TEST(RasSnapshot, TextReportRankOfADeadProcessIsDead) {
  std::vector<RasCommState> comms = CommunicatorsOf(ParseRasText(Fixture("dead.txt")));
  ASSERT_EQ(comms.size(), 1u);
  EXPECT_EQ(comms[0].errors, "INCOMPLETE");
  ASSERT_EQ(comms[0].ranks.size(), 1u);
  EXPECT_EQ(comms[0].ranks[0].rank, 10);
  EXPECT_EQ(comms[0].ranks[0].state, "dead");
}

// The VERBOSE STATUS text of a one-communicator job of `size` ranks, 8 a
// node, whose ranks in `behind` launched one AllReduce fewer, in the image
// of NCCL 2.26's report: groups by count, the largest first, a group's ranks
// listed only when it is under half of the communicator (verbose) or, with
// `verbose` false, at most 10 and at most a quarter; a lone rank always.
std::string MismatchText(int size, const std::set<int>& behind, bool verbose = true) {
  std::vector<int> ahead_ranks, behind_ranks;
  for (int r = 0; r < size; ++r) (behind.count(r) ? behind_ranks : ahead_ranks).push_back(r);
  std::vector<std::pair<int64_t, std::vector<int>>> groups = {{1000, ahead_ranks},
                                                              {999, behind_ranks}};
  if (behind_ranks.size() > ahead_ranks.size()) std::swap(groups[0], groups[1]);
  std::string nodes = std::to_string(size / 8);
  std::string t =
      "NCCL version 2.26.2+cuda12.8\nCUDA runtime version 12080, driver version 12080\n\n"
      "Job summary\n===========\n\n"
      "  Nodes  Processes         GPUs  Processes     GPUs\n"
      "(total)   per node  per process    (total)  (total)\n" +
      std::string(7 - nodes.size(), ' ') + nodes + "          8            1  " +
      std::string(9 - std::to_string(size).size(), ' ') + std::to_string(size) + "  " +
      std::string(7 - std::to_string(size).size(), ' ') + std::to_string(size) +
      "\n\nCommunicators... (0.01s)\n=============\n\n"
      "Group     Comms     Nodes     Ranks     Ranks     Ranks    Status  Errors\n"
      "    #  in group  per comm  per node  per comm  in group\n";
  char row[128];
  snprintf(row, sizeof(row), "%5d  %8d  %8d  %8s  %8d  %8d  %8s  %6s\n", 0, 1, size / 8, "8", size,
           size, "RUNNING", "MISMATCH");
  t += row;
  t += "\nErrors\n======\n\nWarnings\n========\n\n#0-0 (5ca1ab1e0dd5eed5) MISMATCH\n"
       "  Communicator ranks have different AllReduce operation counts\n";
  for (const auto& [op, ranks] : groups) {
    int n = static_cast<int>(ranks.size());
    if (n > 1)
      t += "  " + std::to_string(n) + " ranks have launched up to operation " + std::to_string(op) +
           "\n";
    bool listed = n == 1 || (verbose ? n < size * 0.5 : n <= 10 && n <= size * 0.25);
    if (!listed) continue;
    for (int r : ranks) {
      std::string rank = "  Rank " + std::to_string(r);
      if (n == 1) rank += " has launched up to operation " + std::to_string(op);
      t += rank + " -- GPU " + std::to_string(r % 8) + " managed by process " +
           std::to_string(7000 + r) + " on node 10.1.0." + std::to_string(r / 8 + 1) + "\n";
    }
  }
  return t + "\n";
}

// RAS's text names only the smaller group of a mismatch; the other is a bare
// "N ranks have launched up to operation X" line. When one group is unnamed
// and the communicator's size is known, its ranks are the rest: every rank
// gets its count, so ranks behind are found at any proportion, also when the
// named ranks are the ones behind (then the unnamed top count was lost) or
// the ones ahead (NVIDIA/nccl#1911).
class TextLaggards : public ::testing::TestWithParam<int> {};

TEST_P(TextLaggards, EveryRankGetsItsCount) {
  const int size = 200;
  std::set<int> behind;
  for (int i = 0; i < size * GetParam() / 100; ++i) behind.insert((i * 37 + 5) % size);
  ASSERT_EQ(static_cast<int>(behind.size()), size * GetParam() / 100);
  Report report = ParseRasText(MismatchText(size, behind));
  ASSERT_TRUE(report.complete) << (report.problems.empty() ? "" : report.problems.front());
  std::vector<RasCommState> comms = CommunicatorsOf(report);
  ASSERT_EQ(comms.size(), 1u);
  ASSERT_EQ(static_cast<int>(comms[0].ranks.size()), size);
  for (const RasRankState& k : comms[0].ranks) {
    EXPECT_EQ(k.op_counts, (std::vector<std::pair<std::string, int64_t>>{
                               {"AllReduce", behind.count(k.rank) ? 999 : 1000}}))
        << "rank " << k.rank;
    EXPECT_EQ(k.state, "running") << "rank " << k.rank;
  }
  // A rank RAS named keeps its identity; a rank only counted has none.
  const RasRankState& named = comms[0].ranks[*behind.begin()];
  const RasRankState& counted = comms[0].ranks[GetParam() < 50 ? 0 : *behind.begin()];
  if (GetParam() < 50) {
    EXPECT_EQ(named.node, "10.1.0." + std::to_string(*behind.begin() / 8 + 1));
    EXPECT_EQ(counted.node, "");
    EXPECT_FALSE(counted.pid);
  } else {
    EXPECT_EQ(counted.node, "");
  }
}

INSTANTIATE_TEST_SUITE_P(OnePercentQuarterAndMost, TextLaggards, ::testing::Values(1, 25, 60));

TEST(RasSnapshot, TextReportInfersNothingWhenTwoGroupsAreUnnamed) {
  // RAS's default (not verbose) lists at most 10 ranks a group: 50 behind
  // of 200 and 150 ahead are both bare counts; which rank is where is unknown.
  std::set<int> behind;
  for (int r = 0; r < 50; ++r) behind.insert(r * 4);
  std::vector<RasCommState> comms =
      CommunicatorsOf(ParseRasText(MismatchText(200, behind, /*verbose=*/false)));
  ASSERT_EQ(comms.size(), 1u);
  EXPECT_TRUE(comms[0].ranks.empty());
}

TEST(RasSnapshot, HostsFile) {
  HostsFile h = ParseHostsFile(
      "# the job's nodes\n10.9.0.1 gpu-n1 gpu-n1.cluster  # first\n\n10.9.0.2\tgpu-n2\n"
      "10.9.0.1 other\n10.9.0.3\n",
      "job-hosts");
  EXPECT_EQ(h.host_of,
            (std::map<std::string, std::string>{{"10.9.0.1", "gpu-n1"}, {"10.9.0.2", "gpu-n2"}}));
  EXPECT_EQ(h.problems,
            std::vector<std::string>({"job-hosts:6: address 10.9.0.3 without a host name"}));
}

}  // namespace
}  // namespace fabtrack::ras
