// NCCL RAS reports (collector/ras/ras_report.h): the text report of each
// documented state and the JSON report, including NCCL 2.28.7-2.28.9's lost
// comma and replies cut short, judged into findings naming ranks and hosts.
#include "collector/ras/ras_report.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <set>
#include <sstream>

#include "core/pattern.h"
#include "tests/support/fixture_text.h"

namespace fabtrack::ras {
namespace {

std::string Fixture(const std::string& name) { return testing::FixtureText("ras/" + name); }

const Finding* FindKind(const Verdict& v, const std::string& kind) {
  for (const Finding& f : v.findings) {
    if (f.kind == kind) return &f;
  }
  return nullptr;
}

TEST(RasText, HealthyJobReadsSummaryAndGroups) {
  Report r = ParseRasText(Fixture("healthy.txt"));
  EXPECT_TRUE(r.complete) << (r.problems.empty() ? "" : r.problems[0]);
  EXPECT_TRUE(r.problems.empty());
  EXPECT_EQ(r.nccl_version, "2.27.7+cuda12.9");
  EXPECT_EQ(r.job.nodes, 2);
  EXPECT_EQ(r.job.processes_per_node, 8);
  EXPECT_EQ(r.job.gpus, 16);
  ASSERT_TRUE(r.collection_s);
  EXPECT_DOUBLE_EQ(*r.collection_s, 0.01);
  ASSERT_EQ(r.groups.size(), 2u);
  EXPECT_EQ(r.groups[1].comms, 8);
  EXPECT_EQ(r.groups[1].ranks_per_comm, 2);
  EXPECT_EQ(r.groups[1].status, "RUNNING");
  EXPECT_EQ(r.groups[1].errors, "OK");
  EXPECT_TRUE(r.issues.empty());
  Verdict v = Judge(r);
  EXPECT_EQ(v.health, Health::kHealthy);
  EXPECT_EQ(v.communicators, 9);
  EXPECT_TRUE(v.findings.empty());
}

TEST(RasText, DeadProcessAndItsMissingRank) {
  Report r = ParseRasText(Fixture("dead.txt"));
  ASSERT_TRUE(r.complete);
  ASSERT_EQ(r.groups.size(), 1u);
  EXPECT_EQ(r.groups[0].ranks_per_node, "3-4");
  EXPECT_EQ(r.groups[0].errors, "INCOMPLETE");
  ASSERT_EQ(r.issues.size(), 2u);
  const Issue& dead = r.issues[0];
  EXPECT_TRUE(dead.error);
  EXPECT_EQ(dead.kind, "DEAD");
  EXPECT_EQ(dead.count, 1);
  ASSERT_EQ(dead.processes.size(), 1u);
  EXPECT_EQ(dead.processes[0].pid, 77120);
  EXPECT_EQ(dead.processes[0].node, "10.40.3.17");
  EXPECT_EQ(dead.processes[0].gpus, "2");
  const Issue& comm = r.issues[1];
  EXPECT_EQ(comm.kind, "INCOMPLETE");
  EXPECT_EQ(comm.communicator, "#0-0");
  EXPECT_EQ(comm.comm_hash, "5d0c91e2a4b7f308");
  ASSERT_EQ(comm.ranks.size(), 1u);
  EXPECT_EQ(comm.ranks[0].rank, 10);
  EXPECT_EQ(comm.ranks[0].gpu, "2");
  EXPECT_EQ(comm.ranks[0].pid, 77120);
  EXPECT_EQ(comm.ranks[0].node, "10.40.3.17");

  Verdict v = Judge(r);
  EXPECT_EQ(v.health, Health::kCritical);
  ASSERT_NE(FindKind(v, "dead"), nullptr);
  EXPECT_EQ(FindKind(v, "dead")->processes.at(0).node, "10.40.3.17");
  ASSERT_NE(FindKind(v, "missing"), nullptr);
  EXPECT_EQ(FindKind(v, "missing")->communicator, "#0-0 (5d0c91e2a4b7f308)");
  // The rank is missing because its process is dead: said so, as the JSON
  // report's considered_dead says it.
  ASSERT_EQ(FindKind(v, "missing")->ranks.size(), 1u);
  EXPECT_EQ(FindKind(v, "missing")->ranks[0].state, "considered dead");
}

TEST(RasText, MismatchNamesTheRanksBehind) {
  Report r = ParseRasText(Fixture("mismatch.txt"));
  ASSERT_TRUE(r.complete);
  ASSERT_EQ(r.issues.size(), 1u);
  const Issue& m = r.issues[0];
  EXPECT_FALSE(m.error);
  EXPECT_EQ(m.kind, "MISMATCH");
  ASSERT_EQ(m.groups.size(), 2u);
  EXPECT_EQ(m.groups[0].aspect, "collective operation counts");
  EXPECT_EQ(m.groups[0].count, 28);
  EXPECT_EQ(m.groups[0].operation, 12041);
  EXPECT_TRUE(m.groups[0].ranks.empty());
  EXPECT_EQ(m.groups[1].count, 4);
  EXPECT_EQ(m.groups[1].operation, 12039);
  ASSERT_EQ(m.groups[1].ranks.size(), 4u);
  EXPECT_EQ(m.groups[1].ranks[2].rank, 13);
  EXPECT_EQ(m.groups[1].ranks[2].gpu, "5 (NVML 6)");
  EXPECT_EQ(m.groups[1].ranks[2].pid, 30556);
  EXPECT_EQ(m.groups[1].ranks[3].rank, 27);
  EXPECT_FALSE(m.groups[1].ranks[3].pid.has_value());

  Verdict v = Judge(r);
  EXPECT_EQ(v.health, Health::kWarning);
  const Finding* f = FindKind(v, "mismatch");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(f->ranks.size(), 4u);
  EXPECT_EQ(f->ranks[0].state, "behind: launched up to operation 12039");
  EXPECT_NE(f->message.find("28 ahead, launched up to operation 12041; 4 behind, launched up to "
                            "operation 12039"),
            std::string::npos)
      << f->message;
}

TEST(RasText, StuckCommunicatorWithMissingRankTimeoutAndSingleRankGroups) {
  Report r = ParseRasText(Fixture("incomplete.txt"));
  ASSERT_TRUE(r.complete);
  ASSERT_TRUE(r.collection_s);
  EXPECT_DOUBLE_EQ(*r.collection_s, 3.02);
  ASSERT_EQ(r.issues.size(), 4u);
  EXPECT_EQ(r.issues[0].kind, "INCOMPLETE");
  EXPECT_TRUE(r.issues[0].communicator.empty());
  EXPECT_EQ(r.issues[0].processes.at(0).pid, 9184);
  EXPECT_EQ(r.issues[1].communicator, "#0-0");
  ASSERT_EQ(r.issues[1].ranks.size(), 1u);
  EXPECT_EQ(r.issues[1].ranks[0].rank, 13);
  EXPECT_TRUE(r.issues[1].ranks[0].node.empty());
  EXPECT_EQ(r.issues[2].kind, "TIMEOUT");
  EXPECT_FALSE(r.issues[2].error);
  EXPECT_EQ(r.issues[2].count, 2);
  const Issue& mm = r.issues[3];
  EXPECT_EQ(mm.communicator, "#1-1");
  ASSERT_EQ(mm.groups.size(), 4u);
  EXPECT_EQ(mm.groups[0].aspect, "AllReduce operation counts");
  EXPECT_EQ(mm.groups[1].count, 1);
  EXPECT_EQ(mm.groups[1].operation, 874);
  EXPECT_EQ(mm.groups[1].ranks.at(0).node, "172.20.1.42");
  EXPECT_EQ(mm.groups[3].aspect, "status");
  EXPECT_EQ(mm.groups[3].value, "status INIT");

  Verdict v = Judge(r);
  EXPECT_EQ(v.health, Health::kCritical);
  EXPECT_NE(FindKind(v, "incomplete"), nullptr);
  EXPECT_NE(FindKind(v, "missing"), nullptr);
  EXPECT_NE(FindKind(v, "timeout"), nullptr);
  const Finding* f = FindKind(v, "mismatch");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(f->ranks.size(), 2u);
  EXPECT_EQ(f->ranks[0].state, "behind: launched up to operation 874");
}

TEST(RasText, ReplyCutBeforeTheTableIsSaidNotHalfRead) {
  std::string whole = Fixture("dead.txt");
  Report r = ParseRasText(whole.substr(0, whole.find("Communicators")));
  EXPECT_FALSE(r.complete);
  ASSERT_FALSE(r.problems.empty());
  EXPECT_NE(r.problems[0].find("ends before the communicators table"), std::string::npos);
  Verdict v = Judge(r);
  EXPECT_EQ(v.health, Health::kCritical);
  EXPECT_NE(FindKind(v, "unreadable"), nullptr);

  // Cut in the errors (a RAS thread that died while printing them): not whole.
  Report errors = ParseRasText(whole.substr(0, whole.find("Process 77120") + 9));
  EXPECT_FALSE(errors.complete);
  EXPECT_NE(errors.problems.at(0).find("ends before its Warnings section"), std::string::npos)
      << errors.problems.at(0);
  Report mid = ParseRasText(whole.substr(0, whole.size() - 4));
  EXPECT_FALSE(mid.complete);
  EXPECT_NE(mid.problems.at(0).find("ends mid-line"), std::string::npos);
  EXPECT_FALSE(ParseRasText("").complete);
}

TEST(RasJson, HealthyReport) {
  std::string text = Fixture("healthy.json");
  EXPECT_TRUE(LooksLikeJson(text));
  EXPECT_FALSE(LooksLikeJson(Fixture("healthy.txt")));
  Report r = ParseRasJson(text);
  ASSERT_TRUE(r.complete);
  EXPECT_FALSE(r.json_repaired);
  EXPECT_EQ(r.nccl_version, "2.29.2");
  ASSERT_EQ(r.communicators.size(), 1u);
  const JsonCommunicator& c = r.communicators[0];
  EXPECT_EQ(c.hash, "0x3fa2c9e81b07d455");
  EXPECT_EQ(c.size, 2);
  ASSERT_EQ(c.ranks.size(), 2u);
  EXPECT_EQ(c.ranks[1].host, "10.12.0.6");
  EXPECT_EQ(c.ranks[1].pid, 38811);
  ASSERT_EQ(c.ranks[1].collective_counts.size(), 5u);
  EXPECT_EQ(c.ranks[1].collective_counts[4].first, "AllReduce");
  EXPECT_EQ(c.ranks[1].collective_counts[4].second, 5120);
  EXPECT_TRUE(c.missing_ranks.empty());
  Verdict v = Judge(r);
  EXPECT_EQ(v.health, Health::kHealthy);
  EXPECT_EQ(v.communicators, 1);
}

void ExpectMissingRankReport(const Report& r) {
  ASSERT_TRUE(r.complete) << (r.problems.empty() ? "" : r.problems[0]);
  ASSERT_EQ(r.communicators.size(), 1u);
  const JsonCommunicator& c = r.communicators[0];
  ASSERT_EQ(c.missing_ranks.size(), 1u);
  EXPECT_EQ(c.missing_ranks[0].rank, 3);
  EXPECT_EQ(c.missing_ranks[0].host, "10.12.0.6");
  EXPECT_EQ(c.missing_ranks[0].pid, 38812);
  EXPECT_TRUE(c.missing_ranks[0].unresponsive);
  EXPECT_TRUE(c.missing_ranks[0].considered_dead);
  Verdict v = Judge(r);
  EXPECT_EQ(v.health, Health::kCritical);
  const Finding* dead = FindKind(v, "dead");
  ASSERT_NE(dead, nullptr);
  EXPECT_EQ(dead->ranks.at(0).rank, 3);
  EXPECT_EQ(dead->ranks.at(0).node, "10.12.0.6");
  EXPECT_EQ(dead->ranks.at(0).gpu, "1");
  // Rank 2 is two AllReduces behind the others.
  const Finding* behind = FindKind(v, "behind");
  ASSERT_NE(behind, nullptr);
  ASSERT_EQ(behind->ranks.size(), 1u);
  EXPECT_EQ(behind->ranks[0].rank, 2);
  EXPECT_EQ(behind->ranks[0].state, "AllReduce 975 of 977");
  EXPECT_NE(FindKind(v, "timeout"), nullptr);
}

TEST(RasJson, MissingDeadRank) {
  Report r = ParseRasJson(Fixture("missing_rank.json"));
  EXPECT_FALSE(r.json_repaired);
  ExpectMissingRankReport(r);
}

TEST(RasJson, LostCommaOfNccl2288IsRepaired) {
  Report r = ParseRasJson(Fixture("missing_rank_2_28_8.json"));
  EXPECT_TRUE(r.json_repaired);
  EXPECT_EQ(r.nccl_version, "2.28.8");
  ExpectMissingRankReport(r);
}

TEST(RasJson, OtherInvalidJsonIsNotRepaired) {
  std::string text = Fixture("missing_rank.json");
  text.replace(text.find("\"size\": 4,"), 10, "\"size\": 4");
  Report r = ParseRasJson(text);
  EXPECT_FALSE(r.complete);
  EXPECT_FALSE(r.json_repaired);
  ASSERT_FALSE(r.problems.empty());
  EXPECT_NE(r.problems[0].find("line 12: not valid JSON"), std::string::npos) << r.problems[0];
}

TEST(RasJson, CutOffReplyIsSaid) {
  std::string text = Fixture("healthy.json");
  Report r = ParseRasJson(text.substr(0, text.size() / 2));
  EXPECT_FALSE(r.complete);
  ASSERT_FALSE(r.problems.empty());
  EXPECT_NE(r.problems[0].find("ends before the JSON report does"), std::string::npos)
      << r.problems[0];
  EXPECT_EQ(Judge(r).health, Health::kCritical);
}

// The JSON report is read as it is parsed (no DOM): every field of a rank
// and of a missing rank, keys in any order, unknown keys and values of the
// wrong type (the field's default, as a DOM read gave), a key given twice
// (the last).
TEST(RasJson, FieldsReadWithoutDom) {
  Report r = ParseRasJson(R"({"extra": {"ranks": [{"rank": 9}]}, "communicators": [
    {"size": 3, "ranks": [
      {"collective_counts": {"AllReduce": 7, "Odd": 1.5, "Neg": -2, "Obj": {"x": 1}},
       "status": {"abort_flag": true, "init_state": 7}, "rank": 0, "host": "10.0.0.1",
       "pid": 11, "cuda_dev": 2, "nvml_dev": 3, "unknown": [1, {"rank": 5}]},
      {"rank": "one", "host": 5, "pid": 12.0, "cuda_dev": true, "status": 4,
       "collective_counts": {"AllReduce": 6}, "rank": 1},
      7],
     "missing_ranks": [{"rank": 2, "host": "10.0.0.2", "pid": 13, "status":
       {"unresponsive": true, "considered_dead": 1}}],
     "hash": "0xab"}],
    "nccl_version": "2.29.7", "ras": {"timeouts_count": 2, "collection_time_sec": 0.5}})");
  ASSERT_TRUE(r.complete) << (r.problems.empty() ? "" : r.problems[0]);
  EXPECT_EQ(r.nccl_version, "2.29.7");
  EXPECT_EQ(r.timeouts, 2);
  EXPECT_EQ(r.collection_s, 0.5);
  ASSERT_EQ(r.communicators.size(), 1u);
  const JsonCommunicator& c = r.communicators[0];
  EXPECT_EQ(c.hash, "0xab");
  EXPECT_EQ(c.size, 3);
  ASSERT_EQ(c.ranks.size(), 2u);
  EXPECT_EQ(c.ranks[0].rank, 0);
  EXPECT_EQ(c.ranks[0].host, "10.0.0.1");
  EXPECT_EQ(c.ranks[0].pid, 11);
  EXPECT_EQ(c.ranks[0].cuda_dev, 2);
  EXPECT_EQ(c.ranks[0].nvml_dev, 3);
  EXPECT_TRUE(c.ranks[0].abort_flag);
  EXPECT_EQ(c.ranks[0].init_state, 7);
  ASSERT_EQ(c.ranks[0].collective_counts.size(), 2u);  // integers only
  EXPECT_EQ(c.ranks[0].collective_counts[1], (std::pair<std::string, int64_t>{"Neg", -2}));
  EXPECT_EQ(c.ranks[1].rank, 1);  // the last of two
  EXPECT_EQ(c.ranks[1].host, "");
  EXPECT_EQ(c.ranks[1].pid, 12);
  EXPECT_EQ(c.ranks[1].cuda_dev, 1);
  EXPECT_EQ(c.ranks[1].nvml_dev, -1);
  EXPECT_FALSE(c.ranks[1].abort_flag);
  ASSERT_EQ(c.missing_ranks.size(), 1u);
  EXPECT_EQ(c.missing_ranks[0].host, "10.0.0.2");
  EXPECT_TRUE(c.missing_ranks[0].unresponsive);
  EXPECT_FALSE(c.missing_ranks[0].considered_dead);  // a number is not a bool
  EXPECT_FALSE(ParseRasJson(R"({"communicators": {}})").complete);
  EXPECT_FALSE(ParseRasJson(R"([{"communicators": []}])").complete);
}

// A reply of rank objects past any job's (2^21 entries: "{}," each, 6 MB)
// is not read into memory as ranks: refused, said.
TEST(RasJson, EndlessRanksAreRefused) {
  std::string text = R"({"communicators": [{"hash": "0x1", "size": 2147483648, "ranks": [)";
  for (size_t i = 0; i <= (size_t{1} << 21); ++i) text += i ? ",{}" : "{}";
  text += "]}]}";
  Report r = ParseRasJson(text);
  EXPECT_FALSE(r.complete);
  EXPECT_TRUE(r.communicators.empty());
  ASSERT_FALSE(r.problems.empty());
  EXPECT_EQ(r.problems[0], "more than 2097152 rank entries: not read as a RAS report");
}

// RAS's text lists ranks only when few are off; the JSON report has every
// rank's counts, so the ranks behind are named at any proportion.
TEST(RasJson, RanksBehindAreNamedAtAnyProportion) {
  for (int behind_count : {1, 25, 60}) {
    std::string text =
        R"({"nccl_version": "2.29.2", "communicators": [{"hash": "0x1", "size": 100, "ranks": [)";
    for (int r = 0; r < 100; ++r) {
      if (r > 0) text += ",";
      int64_t count = r < behind_count ? 4000 : 4002;
      text +=
          R"({"rank": )" + std::to_string(r) + R"(, "host": "10.3.0.)" + std::to_string(r / 8) +
          R"(", "pid": )" + std::to_string(1000 + r) + R"(, "cuda_dev": )" + std::to_string(r % 8) +
          R"(, "nvml_dev": )" + std::to_string(r % 8) +
          R"(, "status": {"init_state": 0, "async_error": 0}, "collective_counts": {"AllReduce": )" +
          std::to_string(count) + "}}";
    }
    text += R"(], "missing_ranks": []}], "ras": {"timeouts_count": 0}})";
    Report r = ParseRasJson(text);
    ASSERT_TRUE(r.complete) << behind_count;
    Verdict v = Judge(r);
    EXPECT_EQ(v.health, Health::kWarning) << behind_count;
    const Finding* f = FindKind(v, "behind");
    ASSERT_NE(f, nullptr) << behind_count;
    ASSERT_EQ(f->ranks.size(), static_cast<size_t>(behind_count));
    EXPECT_EQ(f->ranks.back().rank, behind_count - 1);
    EXPECT_EQ(f->ranks.back().node, "10.3.0." + std::to_string((behind_count - 1) / 8));
    EXPECT_EQ(f->message,
              "AllReduce: " + std::to_string(behind_count) + " of 100 ranks behind 4002");
  }
}

// A rank line is read by hand (a verbose report of 131,072 ranks has 65,535
// of them), as the patterns read it: `Rank (\\d+)(?: (.*?))? -- (.*)`, the
// owner `GPU (.+) managed by process (\\d+) on node (\\S+)`. Differential:
// each line read by the parser and by the patterns themselves.
TEST(RasText, RankLinesReadAsThePatternsReadThem) {
  const char* lines[] = {
      "Rank 17 -- GPU 1 managed by process 4242 on node 10.1.0.7",
      "Rank 3 has status INIT -- GPU 0 (NVML 3) managed by process 11 on node n1.cluster",
      "Rank 5 has launched up to operation 6650 -- GPU 2 managed by process 9 on node 10.0.0.2",
      "Rank 4 -- [process information not found]",
      "Rank 6 x -- y -- GPU 1 managed by process 2 on node a",
      "Rank 7 -- GPU 1 managed by process 2 on node a -- b",
      "Rank 8 -- GPU a managed by process 1 managed by process 2 on node z",
      "Rank 9 -- GPU  managed by process 2 on node z",
      "Rank 10 -- GPU 1 managed by process 2x on node z",
      "Rank 11 -- GPU 1 managed by process 2 on node ",
      "Rank 12 -- GPU 1 managed by process 2 on node a b",
      "Rank 13 --",
      "Rank 14  -- GPU 1 managed by process 2 on node a",
      "Rank 15 -- GPU -- managed by process 2 on node a",
      "Rank 99999999999 -- GPU 1 managed by process 2 on node a",
  };
  Pattern rank_pattern(R"(Rank (\d+)(?: (.*?))? -- (.*))");
  Pattern owner_pattern(R"(GPU (.+) managed by process (\d+) on node (\S+))");
  for (const char* line : lines) {
    std::string text = std::string(
                           "Errors\n======\n\n#0-0 (27a079b828ff1a75) INCOMPLETE\n"
                           "  Missing communicator data from 1 rank\n  ") +
                       line + "\n\nWarnings\n========\n\n";
    Report r = ParseRasText(text);
    ASSERT_EQ(r.issues.size(), 1u) << line;
    const Issue& issue = r.issues[0];
    PatternMatch m;
    if (!rank_pattern.Matches(line, &m)) {
      // Not a rank line: a detail of the block.
      EXPECT_TRUE(issue.ranks.empty() && issue.groups.empty()) << line;
      continue;
    }
    // A rank with a state is a group of one; without, a missing rank.
    const RankRef& got = m.str(2).empty() ? issue.ranks.at(0) : issue.groups.at(0).ranks.at(0);
    int64_t number = std::stoll(m.str(1));
    EXPECT_EQ(got.rank, number <= INT32_MAX ? number : -1) << line;
    if (!m.str(2).empty()) {
      std::string value = m.str(2);
      if (value.rfind("has ", 0) == 0) value = value.substr(4);
      EXPECT_EQ(issue.groups[0].value, value) << line;
    }
    PatternMatch o;
    if (owner_pattern.Matches(m.str(3), &o)) {
      EXPECT_EQ(got.gpu, o.str(1)) << line;
      EXPECT_EQ(got.pid, std::stoll(o.str(2))) << line;
      EXPECT_EQ(got.node, o.str(3)) << line;
    } else {
      EXPECT_EQ(got.gpu, "") << line;
      EXPECT_FALSE(got.pid.has_value()) << line;
      EXPECT_EQ(got.node, "") << line;
    }
  }
}

// ---- Every line shape of the text report, per release ---------------------
// NCCL's client_support.cc prints the report with rasOutAppend format strings
// that changed in 2.26.2 (per-collective counts, named missing ranks,
// "not launched any operations", NOCOMM) and 2.28.7 (three decimals); 2.24.3
// and 2.25.1 print "The missing ranks:", "The unknown ranks:" and
// "Rank N has status UNKNOWN". One block of each, with our own values, read
// inside a whole report and rendered compactly.

std::string Describe(const Issue& i) {
  std::string out = std::string(i.error ? "E " : "W ") + i.kind;
  if (!i.communicator.empty()) out += " " + i.communicator;
  if (i.count) out += " count=" + std::to_string(*i.count);
  auto rank = [](const RankRef& k) {
    std::string r = std::to_string(k.rank) + "@" + k.node;
    if (!k.gpu.empty()) r += "/" + k.gpu;
    if (k.pid) r += "/" + std::to_string(*k.pid);
    return r;
  };
  for (const ProcessRef& p : i.processes) {
    out += " | proc " + std::to_string(p.pid) + "@" + p.node + "[" + p.gpus + "]";
  }
  for (const RankRef& k : i.ranks) out += " | rank " + rank(k);
  for (const RankGroup& g : i.groups) {
    out += " | [" + g.aspect + "] " + std::to_string(g.count) + " " + g.value;
    if (g.operation) out += " (" + std::to_string(*g.operation) + ")";
    for (const RankRef& k : g.ranks) out += " " + rank(k);
  }
  return out;
}

std::string WholeReport(const std::string& errors, const std::string& warnings) {
  return "NCCL version 2.26.6 compiled with CUDA 12.8\n"
         "CUDA runtime version 12080, driver version 12080\n\n"
         "Job summary\n===========\n\n"
         "  Nodes  Processes         GPUs  Processes     GPUs\n"
         "(total)   per node  per process    (total)  (total)\n"
         "      2          4            1          8        8\n\n"
         "Communicators... (0.118s)\n=============\n\n"
         "Group     Comms     Nodes     Ranks     Ranks     Ranks    Status  Errors\n"
         "    #  in group  per comm  per node  per comm  in group\n"
         "    0         1         2         4         8         8   RUNNING  MISMATCH\n\n"
         "Errors\n======\n\n" +
         errors + "\nWarnings\n========\n\n" + warnings + "\n";
}

struct BlockCase {
  const char* release;  // the first release printing the shape
  bool error;           // in the Errors section (else Warnings)
  const char* block;
  const char* want;  // Describe() of the one block read
};

class RasTextBlock : public ::testing::TestWithParam<BlockCase> {};

TEST_P(RasTextBlock, IsReadWhole) {
  const BlockCase& c = GetParam();
  Report r = ParseRasText(c.error ? WholeReport(c.block, "") : WholeReport("", c.block));
  ASSERT_TRUE(r.complete) << c.release << ": " << (r.problems.empty() ? "" : r.problems[0]);
  ASSERT_EQ(r.issues.size(), 1u) << c.release;
  EXPECT_EQ(Describe(r.issues[0]), c.want) << c.release << "\n" << c.block;
  ASSERT_TRUE(r.collection_s);
  EXPECT_DOUBLE_EQ(*r.collection_s, 0.118);
}

INSTANTIATE_TEST_SUITE_P(
    EveryRelease, RasTextBlock,
    ::testing::Values(
        BlockCase{"2.24.3", true,
                  "INCOMPLETE\n  Missing communicator data from 2 job processes\n"
                  "  Process 7101 on node 10.9.0.2 managing GPUs 0,1\n"
                  "  [could not find information on 1 process]\n",
                  "E INCOMPLETE count=2 | proc 7101@10.9.0.2[0,1]"},
        BlockCase{"2.24.3", true,
                  "DEAD\n  2 job processes are considered dead (unreachable via the RAS network)\n"
                  "  Process 7102 on node 10.9.0.3 managing GPU 1 (NVML 5)\n",
                  "E DEAD count=2 | proc 7102@10.9.0.3[1 (NVML 5)]"},
        BlockCase{"2.24.3", true,
                  "#0-0 (00aa11bb22cc33dd) INCOMPLETE\n  Missing communicator data from 2 ranks\n"
                  "  The missing ranks: 3,7\n",
                  "E INCOMPLETE #0-0 count=2 | rank 3@ | rank 7@"},
        BlockCase{
            "2.24.3", true,
            "#0-1 (00aa11bb22cc33de) ERROR\n  Initialization errors on 3 ranks\n"
            "  3 ranks reported Remote process error\n"
            "  Asynchronous error on 1 rank\n"
            "  Rank 6 reported Unhandled system error -- GPU 2 managed by process 7106 on node "
            "10.9.0.3\n",
            "E ERROR #0-1 count=3 | [Initialization errors] 3 reported Remote process error | "
            "[Asynchronous errors] 1 reported Unhandled system error 6@10.9.0.3/2/7106"},
        BlockCase{"2.24.3", false,
                  "#0-0 (00aa11bb22cc33dd) MISMATCH\n  Communicator ranks have different status\n"
                  "  5 ranks have status RUNNING\n  2 ranks have status UNKNOWN\n"
                  "  The unknown ranks: 1,4\n"
                  "  Rank 6 has status INIT -- [process information not found]\n",
                  "W MISMATCH #0-0 | [status] 5 status RUNNING | [status] 2 status UNKNOWN 1@ 4@ | "
                  "[status] 1 status INIT 6@"},
        BlockCase{"2.24.3", false,
                  "#0-0 (00aa11bb22cc33dd) MISMATCH\n  Communicator ranks have different status\n"
                  "  7 ranks have status FINALIZE\n  Rank 3 has status UNKNOWN\n\n"
                  "  Communicator ranks have different collective operation counts\n"
                  "  7 ranks have launched up to operation 88\n"
                  "  Rank 2 has launched up to operation 86 -- [process information not found]\n",
                  "W MISMATCH #0-0 | [status] 7 status FINALIZE | [status] 1 status UNKNOWN 3@ | "
                  "[collective operation counts] 7 launched up to operation 88 (88) | [collective "
                  "operation counts] 1 launched up to operation 86 (86) 2@"},
        BlockCase{"2.26.2", true,
                  "#0-0 (00aa11bb22cc33dd) INCOMPLETE\n  Missing communicator data from 2 ranks\n"
                  "  Rank 3 -- GPU 3 managed by process 7103 on node 10.9.0.2\n"
                  "  Rank 7 -- [process information not found]\n",
                  "E INCOMPLETE #0-0 count=2 | rank 3@10.9.0.2/3/7103 | rank 7@"},
        BlockCase{
            "2.26.2", false,
            "#0-0 (00aa11bb22cc33dd) MISMATCH\n"
            "  Communicator ranks have different Broadcast operation counts\n"
            "  6 ranks have not launched any operations\n"
            "  2 ranks have launched up to operation 1\n"
            "  Rank 0 -- GPU 0 managed by process 7100 on node 10.9.0.2\n"
            "  Rank 4 -- GPU 0 managed by process 7104 on node 10.9.0.3\n\n"
            "  Communicator ranks have different AllReduce operation counts\n"
            "  7 ranks have launched up to operation 301\n"
            "  Rank 5 has not launched any operations -- GPU 1 managed by process 7105 on node "
            "10.9.0.3\n",
            "W MISMATCH #0-0 | [Broadcast operation counts] 6 not launched any operations (0) | "
            "[Broadcast operation counts] 2 launched up to operation 1 (1) 0@10.9.0.2/0/7100 "
            "4@10.9.0.3/0/7104 | [AllReduce operation counts] 7 launched up to operation 301 "
            "(301) | [AllReduce operation counts] 1 not launched any operations (0) "
            "5@10.9.0.3/1/7105"},
        BlockCase{"2.26.2", false,
                  "#0-0 (00aa11bb22cc33dd) MISMATCH\n  Communicator ranks have different status\n"
                  "  7 ranks have status RUNNING\n"
                  "  Rank 2 has status NOCOMM -- GPU 2 managed by process 7102 on node 10.9.0.2\n",
                  "W MISMATCH #0-0 | [status] 7 status RUNNING | [status] 1 status NOCOMM "
                  "2@10.9.0.2/2/7102"},
        BlockCase{
            "2.26.2", false,
            "TIMEOUT\n  Encountered 1 communication timeout while gathering communicator data\n",
            "W TIMEOUT count=1"},
        // ncclSocketToHost prints nothing for an address it has no family for;
        // rasGpuDevsToString nothing for a process without GPUs.
        BlockCase{"2.29.7", true,
                  "INCOMPLETE\n  Missing communicator data from 1 job process\n"
                  "  Process 7109 on node  managing GPU \n",
                  "E INCOMPLETE count=1 | proc 7109@[]"}),
    [](const ::testing::TestParamInfo<BlockCase>& info) {
      std::string name =
          std::string("nccl_") + info.param.release + "_" + std::to_string(info.index);
      std::replace(name.begin(), name.end(), '.', '_');
      return name;
    });

struct SummaryCase {
  const char* release;
  const char* summary;  // between "Job summary" and "Communicators..."
  int nodes, processes, gpus;
  size_t outliers;
};

class RasTextJobSummary : public ::testing::TestWithParam<SummaryCase> {};

TEST_P(RasTextJobSummary, TotalsAndOutliers) {
  const SummaryCase& c = GetParam();
  std::string whole = WholeReport("", "");
  size_t from = whole.find("  Nodes"), to = whole.find("Communicators...");
  whole.replace(from, to - from, c.summary);
  Report r = ParseRasText(whole);
  ASSERT_TRUE(r.complete) << c.release;
  EXPECT_EQ(r.job.nodes, c.nodes) << c.release;
  EXPECT_EQ(r.job.processes, c.processes) << c.release;
  EXPECT_EQ(r.job.gpus, c.gpus) << c.release;
  EXPECT_EQ(r.job.outlier_nodes.size(), c.outliers) << c.release;
  EXPECT_EQ(r.groups.size(), 1u) << c.release;
}

INSTANTIATE_TEST_SUITE_P(
    EveryShape, RasTextJobSummary,
    ::testing::Values(
        SummaryCase{"2.24.3 even",
                    "  Nodes  Processes         GPUs  Processes     GPUs\n"
                    "(total)   per node  per process    (total)  (total)\n"
                    "     12          8            1         96       96\n\n",
                    12, 96, 96, 0},
        // Uneven, one GPU per process everywhere: per-node rows, totals, outliers.
        SummaryCase{"2.24.3 uneven",
                    "  Nodes  Processes         GPUs\n          per node  per process\n"
                    "      3          8            1\n      1          4            1\n\n"
                    "  Nodes  Processes         GPUs\n(total)    (total)      (total)\n"
                    "      4         28           28\n\n"
                    "The outlier node:\n  Node 10.9.0.9 running processes 7201,7202,7203,7204\n\n",
                    4, 28, 28, 1},
        // Uneven GPUs per process: two-column rows of each distribution.
        SummaryCase{
            "2.24.3 uneven GPUs",
            "  Nodes  Processes\n          per node\n      2          8\n      1          1\n\n"
            "         Processes         GPUs\n                    per process\n"
            "                16            1\n                 1            8\n\n"
            "  Nodes  Processes         GPUs\n(total)    (total)      (total)\n"
            "      3         17           24\n\n",
            3, 17, 24, 0}),
    [](const ::testing::TestParamInfo<SummaryCase>& info) {
      std::string name = std::string("nccl_") + info.param.release;
      for (char& c : name) {
        if (!isalnum(static_cast<unsigned char>(c))) c = '_';
      }
      return name;
    });

// A job whose communicators are all gone (2.24.3-2.30.7 print this in place
// of the table): read whole, no communicators; what RAS knows of dead
// processes still counts.
TEST(RasText, NoCommunicatorDataIsAWholeReport) {
  std::string whole = WholeReport(
      "DEAD\n  1 job process is considered dead (unreachable via the RAS network)\n"
      "  Process 7110 on node 10.9.0.4 managing GPU 3\n",
      "");
  size_t from = whole.find("Group "), to = whole.find("\nErrors\n");
  whole.replace(from, to - from, "No communicator data collected!\n");
  Report r = ParseRasText(whole);
  ASSERT_TRUE(r.complete) << (r.problems.empty() ? "" : r.problems[0]);
  EXPECT_TRUE(r.groups.empty());
  Verdict v = Judge(r);
  EXPECT_EQ(v.communicators, 0);
  EXPECT_EQ(v.health, Health::kCritical);
  ASSERT_NE(FindKind(v, "dead"), nullptr);
  EXPECT_EQ(FindKind(v, "dead")->processes.at(0).pid, 7110);
}

TEST(RasText, UnevenJobWithOutlierNodeAndNocommGroup) {
  Report r = ParseRasText(Fixture("uneven_2_27.txt"));
  ASSERT_TRUE(r.complete) << (r.problems.empty() ? "" : r.problems[0]);
  EXPECT_TRUE(r.problems.empty());
  EXPECT_EQ(r.job.nodes, 3);
  EXPECT_EQ(r.job.processes, 19);
  ASSERT_EQ(r.job.outlier_nodes.size(), 1u);
  EXPECT_EQ(r.job.outlier_nodes[0].node, "10.77.4.31");
  EXPECT_EQ(r.job.outlier_nodes[0].pids, "51207,51208,51211");
  ASSERT_EQ(r.groups.size(), 3u);
  EXPECT_EQ(r.groups[2].status, "NOCOMM");
  EXPECT_EQ(r.groups[2].errors, "INCOMPLETE,MISMATCH");
  ASSERT_EQ(r.issues.size(), 4u);
  EXPECT_EQ(Describe(r.issues[2]), "E INCOMPLETE #2-0 count=3 | rank 4@ | rank 9@ | rank 12@");
  EXPECT_EQ(Describe(r.issues[3]), "W MISMATCH #2-0");
  Verdict v = Judge(r);
  EXPECT_EQ(v.health, Health::kCritical);
  EXPECT_EQ(v.communicators, 6);
}

// NVIDIA/nccl#1911: RAS names the few ranks ahead; the many behind are only
// counted. The verdict says which is which.
TEST(RasText, RanksAheadAreNotCalledBehind) {
  Report r = ParseRasText(Fixture("ahead_2_26.txt"));
  ASSERT_TRUE(r.complete);
  Verdict v = Judge(r);
  EXPECT_EQ(v.health, Health::kWarning);
  const Finding* f = FindKind(v, "mismatch");
  ASSERT_NE(f, nullptr);
  // The 3 + 1 ahead RAS names, and the 29 + 31 behind: the rest of the
  // 32-rank communicator.
  ASSERT_EQ(f->ranks.size(), 64u);
  EXPECT_EQ(f->ranks[0].rank, 0);
  EXPECT_EQ(f->ranks[0].state,
            "behind: launched up to operation 1187 (not named by RAS: the communicator's other "
            "ranks)");
  EXPECT_EQ(f->ranks[29].rank, 20);
  EXPECT_EQ(f->ranks[29].state, "ahead: launched up to operation 1188");
  EXPECT_EQ(f->ranks[63].rank, 7);
  EXPECT_EQ(f->ranks[63].state, "ahead: launched up to operation 2");
  EXPECT_EQ(f->message,
            "Communicator ranks have different AllGather operation counts: 29 behind, launched up "
            "to operation 1187 (the communicator's other ranks); 3 ahead, launched up to operation "
            "1188 / ReduceScatter operation counts: 31 behind, not launched any operations (the "
            "communicator's other ranks); 1 ahead, launched up to operation 2");
}

// At 60% behind, RAS's verbose text names the ranks ahead (under half) and
// only counts those behind; less the dead rank, they are the rest of the
// communicator, and `ras status` names them by number.
TEST(RasText, UnnamedRanksBehindAreTheRestOfTheCommunicator) {
  Report r = ParseRasText(Fixture("behind_most_2_26.txt"));
  ASSERT_TRUE(r.complete);
  Verdict v = Judge(r);
  EXPECT_EQ(v.health, Health::kCritical);  // the dead rank
  const Finding* f = FindKind(v, "mismatch");
  ASSERT_NE(f, nullptr);
  std::set<int> behind, ahead;
  for (const RankRef& k : f->ranks) {
    if (k.state.rfind("behind: ", 0) == 0) behind.insert(k.rank);
    if (k.state.rfind("ahead: ", 0) == 0) ahead.insert(k.rank);
  }
  EXPECT_EQ(behind, (std::set<int>{0, 1, 2, 4, 6, 8, 10, 12, 15}));
  EXPECT_EQ(ahead, (std::set<int>{3, 7, 9, 11, 13, 14}));
  EXPECT_EQ(f->ranks.front().state,
            "behind: launched up to operation 999 (not named by RAS: the communicator's other "
            "ranks)");
  EXPECT_EQ(f->message,
            "Communicator ranks have different AllReduce operation counts: 9 behind, launched up "
            "to operation 999 (the communicator's other ranks); 6 ahead, launched up to "
            "operation 1000");
}

// The table's size is the peer's word: a communicator of two billion ranks
// is not made into two billion rank lines (the fuzzer's reply, not NCCL's).
TEST(RasText, AHugeClaimedCommunicatorIsNotFilledIn) {
  std::string text = Fixture("behind_most_2_26.txt");
  auto swap = [&](const std::string& from, const std::string& to) {
    size_t at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
  };
  swap("       16        15   RUNNING", " 2000000000        15   RUNNING");
  swap("  9 ranks have launched up to operation 999",
       "  1999999993 ranks have launched up to "
       "operation 999");
  Report r = ParseRasText(text);
  ASSERT_EQ(r.groups.size(), 1u);
  ASSERT_EQ(r.groups[0].ranks_per_comm, 2000000000);
  const Finding* f = FindKind(Judge(r), "mismatch");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->ranks.size(), 6u);  // the ranks RAS named, no more
}

TEST(RasText, UnknownRanksOf2_24AreMembersOfTheirGroup) {
  Report r = ParseRasText(Fixture("finalize_2_24.txt"));
  ASSERT_TRUE(r.complete);
  ASSERT_EQ(r.issues.size(), 1u);
  EXPECT_EQ(Describe(r.issues[0]),
            "W MISMATCH #0-0 | [status] 4 status RUNNING | [status] 3 status UNKNOWN 0@ 2@ 5@ | "
            "[status] 1 status FINALIZE 4@192.168.7.22/0/31874");
  EXPECT_TRUE(r.issues[0].details.size() == 1) << r.issues[0].details.size();
}

// A reply that ends after the table (the RAS thread crashed while printing
// the errors, NVIDIA/nccl#1762): the table says INCOMPLETE, the blocks are
// gone; not a healthy report.
TEST(RasText, ReplyEndingAfterTheTableIsNotWhole) {
  Report r = ParseRasText(Fixture("cut_after_table.txt"));
  EXPECT_FALSE(r.complete);
  EXPECT_EQ(r.groups.size(), 2u);
  ASSERT_FALSE(r.problems.empty());
  EXPECT_EQ(r.problems[0],
            "line 17: the reply ends before its Warnings section (the RAS thread stopped "
            "mid-report?)");
  EXPECT_EQ(Judge(r).health, Health::kCritical);
}

// Excerpts as NCCL's documentation prints them: starting at the table's
// header, or eliding the section headers with "[...]".
TEST(RasText, ExcerptsAreReadAsFarAsTheyGo) {
  std::string whole = Fixture("mismatch.txt");
  Report table = ParseRasText(whole.substr(whole.find("Group ")));
  EXPECT_TRUE(table.complete) << (table.problems.empty() ? "" : table.problems[0]);
  EXPECT_EQ(table.groups.size(), 1u);
  EXPECT_EQ(Judge(table).health, Health::kWarning);

  std::string elided =
      whole.substr(0, whole.find("\nErrors\n")) + "\n[...]\n\n" + whole.substr(whole.find("#0-0"));
  Report r = ParseRasText(elided);
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_NE(r.problems[0].find("ends before its Warnings section"), std::string::npos);
  ASSERT_EQ(r.issues.size(), 1u);
  EXPECT_EQ(r.issues[0].kind, "MISMATCH");
  EXPECT_FALSE(r.issues[0].error);
  EXPECT_FALSE(r.complete);  // no Warnings header: an excerpt, said so
}

// ---- JSON shapes --------------------------------------------------------

// rasDumpCommsToJSON prints host "unknown" and pid -1 for a rank whose
// process RAS cannot find; NCCL 2.29.7 can list an unfilled communicator
// (hash 0, size 0: NVIDIA/nccl#2346), and a "status" of null is read as none.
TEST(RasJson, UnknownProcessAndEmptyCommunicator) {
  std::string text = R"({"nccl_version": "2.29.7", "communicators_count": 2, "communicators": [
    {"hash": "0x0", "secondary_hash": "0x0:0x0", "size": 0, "ranks_count": 0,
     "missing_ranks_count": 0, "ranks": [
      ], "missing_ranks": [
      ]},
    {"hash": "0x5c01", "secondary_hash": "0x1:0x2", "size": 3, "ranks_count": 2,
     "missing_ranks_count": 1, "ranks": [
      {"rank": 0, "host": "10.2.0.4", "pid": 900, "cuda_dev": 0, "nvml_dev": 0,
       "status": null, "collective_counts": null},
      {"rank": 1, "host": "10.2.0.4", "pid": 901, "cuda_dev": 1, "nvml_dev": 1,
       "status": {"init_state": 0, "async_error": 0, "finalize_called": false,
                  "destroy_flag": false, "abort_flag": false},
       "collective_counts": {"Broadcast": 0, "Reduce": 0, "AllGather": 0, "ReduceScatter": 0,
                             "AllReduce": 18446744073709551615}}],
     "missing_ranks": [
      {"rank": 2, "host": "unknown", "pid": -1, "cuda_dev": 2, "nvml_dev": 2,
       "status": {"unresponsive": true, "considered_dead": false}}]}],
  "ras": {"collection_time_sec": 0.004, "timeouts_count": 0}}
)";
  Report r = ParseRasJson(text);
  ASSERT_TRUE(r.complete) << (r.problems.empty() ? "" : r.problems[0]);
  ASSERT_EQ(r.communicators.size(), 2u);
  Verdict v = Judge(r);
  EXPECT_EQ(v.health, Health::kCritical);
  const Finding* missing = FindKind(v, "missing");
  ASSERT_NE(missing, nullptr);
  EXPECT_EQ(missing->communicator, "0x5c01");
  EXPECT_EQ(missing->ranks.at(0).node, "");
  EXPECT_FALSE(missing->ranks.at(0).pid.has_value());
  EXPECT_EQ(FindKind(v, "error"), nullptr);
}

// A saved `nc` session: the protocol's answers before the JSON report.
TEST(RasReport, SavedSessionIsDetectedAndLinesStayTheFiles) {
  std::string json = Fixture("healthy.json");
  EXPECT_TRUE(LooksLikeJson("SERVER PROTOCOL 2\nOK\nOK\n" + json));
  Report r = ParseRasReport("SERVER PROTOCOL 2\nOK\n" + json);
  EXPECT_EQ(r.format, "json");
  EXPECT_TRUE(r.complete);
  std::string broken = json;
  broken.replace(broken.find("\"size\": 2,"), 10, "\"size\": 2");
  Report b = ParseRasReport("OK\n" + broken);
  ASSERT_FALSE(b.complete);
  EXPECT_NE(b.problems.at(0).find("line 13: not valid JSON"), std::string::npos)
      << b.problems.at(0);
  Report t = ParseRasReport("$ ncclras -v\n" + Fixture("healthy.txt"));
  EXPECT_EQ(t.format, "text");
  EXPECT_TRUE(t.complete);
}

// `ncclras >> hang.txt` run twice: the newest report is the one judged, its
// problems at the file's lines.
TEST(RasReport, OfAppendedReportsTheLastIsRead) {
  std::string healthy = Fixture("healthy.txt"), dead = Fixture("dead.txt");
  size_t healthy_lines = static_cast<size_t>(std::count(healthy.begin(), healthy.end(), '\n'));
  Report r = ParseRasReport(healthy + dead);
  ASSERT_TRUE(r.complete);
  EXPECT_EQ(r.earlier_reports, 1);
  EXPECT_EQ(r.first_line, healthy_lines + 1);
  EXPECT_EQ(r.nccl_version, "2.26.6+cuda12.8");
  EXPECT_EQ(r.groups.size(), 1u);
  EXPECT_EQ(Judge(r).health, Health::kCritical);

  Report back = ParseRasReport(dead + healthy + healthy);
  EXPECT_EQ(back.earlier_reports, 2);
  EXPECT_EQ(Judge(back).health, Health::kHealthy);

  // Cut after the newest report's table: said at the file's line.
  std::string piece = healthy.substr(0, healthy.find("\nErrors\n") + 1);
  Report cut = ParseRasReport(dead + piece);
  EXPECT_FALSE(cut.complete);
  size_t lines = static_cast<size_t>(std::count(dead.begin(), dead.end(), '\n') +
                                     std::count(piece.begin(), piece.end(), '\n'));
  EXPECT_EQ(cut.problems.at(0).rfind("line " + std::to_string(lines) + ": the reply ends", 0), 0u)
      << cut.problems.at(0);
}

// A report saved from a Windows editor: a byte order mark, CRLF line ends.
TEST(RasReport, ByteOrderMarkAndCrlfAreNoObstacle) {
  auto windows = [](std::string text) {
    std::string out = "\xEF\xBB\xBF";
    for (char c : text) {
      if (c == '\n') out += '\r';
      out += c;
    }
    return out;
  };
  Report text = ParseRasReport(windows(Fixture("mismatch.txt")));
  ASSERT_TRUE(text.complete) << (text.problems.empty() ? "" : text.problems[0]);
  EXPECT_EQ(text.nccl_version, "2.25.1+cuda12.4");
  EXPECT_EQ(FindKind(Judge(text), "mismatch")->ranks.size(), 4u);
  Report json = ParseRasReport(windows(Fixture("missing_rank_2_28_8.json")));
  EXPECT_EQ(json.format, "json");
  EXPECT_TRUE(json.json_repaired);
  ExpectMissingRankReport(json);
}

}  // namespace
}  // namespace fabtrack::ras
