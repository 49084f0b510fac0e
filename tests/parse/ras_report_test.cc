// NCCL RAS reports (collector/ras/ras_report.h): the text report of each
// documented state and the JSON report, including NCCL 2.28.7-2.28.9's lost
// comma and replies cut short, judged into findings naming ranks and hosts.
#include "collector/ras/ras_report.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace fabtrack::ras {
namespace {

std::string Fixture(const std::string& name) {
  std::ifstream in(std::string(FABTRACK_FIXTURE_DIR) + "/ras/" + name);
  EXPECT_TRUE(in) << name;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

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
  EXPECT_NE(f->message.find("28 launched up to operation 12041"), std::string::npos) << f->message;
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

  Report mid = ParseRasText(whole.substr(0, whole.find("Process 77120") + 9));
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

}  // namespace
}  // namespace fabtrack::ras
