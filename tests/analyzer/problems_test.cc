// Findings folded into problems: a 60-night history with two regressions
// and three one-night faults is five problems, not dozens of rows.
#include "analyzer/problems.h"

#include <gtest/gtest.h>

#include <map>

#include "analyzer/analyze.h"
#include "analyzer/config.h"
#include "core/clock.h"
#include "tests/analyzer/input_builder.h"
#include "tests/analyzer/scenario.h"

namespace fabtrack::analyzer {
namespace {

using testing::Fault;
using testing::FaultWindow;
using testing::kDay;
using testing::kFirstNight;

std::string NightIso(int night) {
  return IsoFromSeconds(kFirstNight + night * kDay, IsoStyle::kSeconds);
}

// A cluster whose multi-node runs always go over sockets because NCCL sees
// no HCA: five nights of 1, 2 and 4 nodes, each multi-node run both
// rdma_absent (the cause, from the log) and socket_fallback (what it led
// to).
testing::InputBuilder AlwaysSocketCluster() {
  testing::InputBuilder b;
  for (int night = 0; night < 5; ++night) {
    for (int nodes : {1, 2, 4}) {
      RunView& run = b.AddRun(night, nodes, nodes * 600.0);
      run.network = "Socket";
      run.transports = {};
      for (int64_t size = 8; size <= (int64_t{1} << 30); size *= 8) {
        b.AddResult(run, size, 20 + size / 1e4, nodes == 1 ? 90.0 : 1.1);
      }
      if (nodes > 1) b.AddLogEvent(run, "info", 12, "node01", "NET/IB : No device found.");
    }
  }
  b.JudgeFrom(0);
  return b;
}

// Issue 33: one problem per root cause. The always-socket cluster is one
// problem per node count (the cause, its effect folded in), not two.
TEST(ProblemsTest, AlwaysSocketClusterIsOneProblemPerNodeCount) {
  testing::InputBuilder b = AlwaysSocketCluster();
  AnalysisResult result = Analyze(b.Build(), AnalyzerConfig{});
  int rdma_absent = 0, socket_fallback = 0;
  for (const Finding& f : result.findings) {
    if (f.kind == "rdma_absent") ++rdma_absent;
    if (f.kind != "socket_fallback") continue;
    ++socket_fallback;  // still a finding of its run, marked as explained
    EXPECT_EQ(f.evidence.value("explained_by", ""), "rdma_absent") << f.evidence.dump();
  }
  EXPECT_EQ(rdma_absent, 10);
  EXPECT_EQ(socket_fallback, 10);
  // The problems of the transport (the socket runs are also slower than the
  // one-node runs: scaling_drop's business, not this test's).
  std::vector<Problem> problems;
  for (Problem& p : FoldProblems(result, {}, NightIso(5))) {
    if (p.kind == "rdma_absent" || p.kind == "socket_fallback") problems.push_back(std::move(p));
  }
  ASSERT_EQ(problems.size(), 2u) << VerdictLine(problems);
  for (const Problem& p : problems) {
    SCOPED_TRACE(p.subject);
    EXPECT_EQ(p.kind, "rdma_absent");
    EXPECT_EQ(p.severity, Severity::kCritical);
    EXPECT_EQ(p.nights, 5);
    EXPECT_EQ(p.findings, 10);  // both findings of each of the five nights
    ASSERT_EQ(p.related.size(), 1u);
    EXPECT_EQ(p.related[0].kind, "socket_fallback");
    EXPECT_EQ(p.related[0].run_id, p.latest.run_id);
  }
  EXPECT_NE(problems[0].subject, problems[1].subject);

  // A socket fallback that nothing in its run explains stays a problem.
  std::vector<Finding> unexplained;
  for (const Finding& f : result.findings) {
    if (f.kind == "socket_fallback") unexplained.push_back(f);
  }
  AnalysisResult alone;
  alone.findings = unexplained;
  EXPECT_EQ(FoldProblems(alone, {}, NightIso(5)).size(), 2u);
}

// The same cluster declaring `[cluster] transport = socket`: no problem, and
// one info note per run (the cause, the effect's note in its evidence).
TEST(ProblemsTest, DeclaredSocketClusterGetsOneInfoNotePerRun) {
  testing::InputBuilder b = AlwaysSocketCluster();
  AnalysisResult result =
      Analyze(b.Build(), ParseAnalyzerConfig("[cluster]\ntransport = socket\n", "t.conf"));
  for (const Problem& p : result.problems) {
    EXPECT_NE(p.kind, "rdma_absent");
    EXPECT_NE(p.kind, "socket_fallback");
  }
  std::map<int64_t, int> notes_per_run;
  for (const Finding& f : result.findings) {
    if (f.kind != "rdma_absent" && f.kind != "socket_fallback") continue;
    EXPECT_EQ(f.severity, Severity::kInfo) << f.kind;
    ++notes_per_run[f.run_id.value_or(0)];
    EXPECT_EQ(f.kind, "rdma_absent");
    ASSERT_TRUE(f.evidence.contains("explains_notes")) << f.evidence.dump();
    EXPECT_EQ(f.evidence["explains_notes"][0]["kind"], "socket_fallback");
  }
  EXPECT_EQ(notes_per_run.size(), 10u);
  for (const auto& [run, notes] : notes_per_run) EXPECT_EQ(notes, 1) << "run " << run;
}

TEST(ProblemsTest, SixtyNightsWithTwoRegressionsAndThreeOneNightFaults) {
  testing::ScenarioSpec spec;
  spec.nights = 60;
  spec.seed = 7;
  spec.more_faults = {
      FaultWindow{Fault::kJitter, 30, 59, 4, 4, 0},         // regression from night 30
      FaultWindow{Fault::kLatencyRise, 45, 59, 2, 2, 0.3},  // regression from night 45
      FaultWindow{Fault::kPortErrors, 15, 15, 4, 3, 0},     // one night, node03
      FaultWindow{Fault::kSharedNic, 22, 22, 16, 16, 0},    // one night, node16
      FaultWindow{Fault::kGdrdmaLost, 50, 50, 16, 9, 0},    // one night, node09
  };
  testing::Scenario scenario = testing::MakeScenario(spec);
  scenario.input.judge_from = kFirstNight + 10 * kDay - 3600;
  AnalysisResult result = Analyze(scenario.input, AnalyzerConfig{});
  std::vector<Problem> problems = FoldProblems(result, {}, NightIso(60));
  int rows = 0;
  for (const Finding& f : result.findings) rows += f.severity != Severity::kInfo;
  EXPECT_GE(rows, 45) << "the history no longer produces a finding per faulty night";
  // kind, subject's start, first night, last night, nights, state.
  struct Expected {
    std::string kind, subject_prefix;
    int first, last, nights;
    ProblemState state;
  };
  const std::vector<Expected> expected = {
      {"latency_regression", "all_reduce/float/2 nodes", 45, 59, 15, ProblemState::kOngoing},
      {"latency_jitter", "all_reduce/float/4 nodes", 30, 59, 30, ProblemState::kOngoing},
      // The 30% latency rise at 2 nodes is an 18% busbw loss at 128 KiB .. 32
      // MiB there (time = latency + size / bandwidth): the medium band's
      // finding on the same series, the same nights. Its pooled verdict of
      // night 47 (two nights in a row, carried by the 2-node series alone)
      // folds into it.
      {"midsize_busbw_regression", "all_reduce/float/2 nodes", 45, 59, 15,
       ProblemState::kOngoing},
      {"port_errors", "node03:mlx5_0/1", 15, 15, 1, ProblemState::kRecovered},
      {"gdrdma_disabled", "host node09", 50, 50, 1, ProblemState::kRecovered},
      // Issue 32's pooled band verdict on night 57: that night is one of the
      // scenario's outlier nights (a busy neighbour: every series' latency
      // 4% up, seed 7's nights 17, 28 and 57). The series that carry the
      // verdict (z >= 2) are the 8- and 16-node ones (z 3.2 and 2.9, +7.8%
      // and +6.6%), which have no problem of their own, and the 2-node one
      // (z 2.3, its regression); the 4-node jitter is not among them (z
      // 1.1). So it is not only the evidence of the two problems (a band
      // verdict whose carriers all have problems folds into them:
      // BandVerdictFoldsIntoItsCarryingSeriesProblems) but a pooled alarm
      // of its own on an outlier night.
      {"latency_regression", "latency at small sizes, all multi-node series", 57, 57, 1,
       ProblemState::kRecovered},
      {"shared_nic", "host node16", 22, 22, 1, ProblemState::kRecovered},
  };
  std::string listed;
  for (const Problem& p : problems) listed += p.kind + " " + p.subject + "; ";
  ASSERT_EQ(problems.size(), expected.size()) << listed;
  for (size_t i = 0; i < expected.size(); ++i) {
    const Problem& p = problems[i];
    const Expected& e = expected[i];
    SCOPED_TRACE(p.kind + " " + p.subject);
    EXPECT_EQ(p.kind, e.kind);
    EXPECT_EQ(p.subject.rfind(e.subject_prefix, 0), 0u);
    EXPECT_EQ(p.first_seen.substr(0, 10), NightIso(e.first).substr(0, 10));
    EXPECT_EQ(p.last_seen.substr(0, 10), NightIso(e.last).substr(0, 10));
    EXPECT_EQ(p.nights, e.nights);
    EXPECT_EQ(p.state, e.state);
    EXPECT_EQ(p.id, FindingFingerprint(result.cluster, p.kind, p.subject));
  }
  // The band verdicts' carriers (z >= 2). Night 57's: the 2-node series and
  // the problem-free 8- and 16-node ones. Since the noise model (issue 32
  // item 2) the 4-node series' jitter runs are each judged on their own
  // within-run spread (CV 0.9 over 20 iterations: 20%) and weigh almost
  // nothing in the pool, where they had counted as a steady series near
  // zero; so the 2-node series' own 30% rise adds up in the CUSUM by night
  // 47 too: a sequential verdict whose one carrier is the 2-node series,
  // folded into that series' problem (the problem list above is unchanged).
  int band_verdicts = 0;
  for (const Finding& f : result.findings) {
    if (f.subject.rfind("latency at small sizes", 0) != 0) continue;
    ++band_verdicts;
    std::vector<std::string> carriers;
    for (const nlohmann::json& s : f.evidence["series"]) {
      if (s["z"].get<double>() >= 2) carriers.push_back(s["subject"].get<std::string>());
    }
    if (f.run_started_at.value_or("").substr(0, 10) != NightIso(57).substr(0, 10)) {
      ASSERT_EQ(carriers.size(), 1u) << f.message;
      EXPECT_EQ(carriers[0].rfind("all_reduce/float/2 nodes", 0), 0u) << f.message;
      EXPECT_EQ(f.evidence["pooled"]["rule"], "sequential") << f.message;
      continue;
    }
    EXPECT_EQ(carriers.size(), 3u) << f.evidence["series"].dump();
    for (const Problem& p : problems) {
      if (p.subject.rfind("all_reduce/float/8 nodes", 0) == 0 ||
          p.subject.rfind("all_reduce/float/16 nodes", 0) == 0) {
        ADD_FAILURE() << "a carrier has a problem now: " << p.kind << " " << p.subject;
      }
    }
  }
  EXPECT_EQ(band_verdicts, 2);
  EXPECT_EQ(ExitStatusOf(result), 2);
  EXPECT_EQ(VerdictLine(problems).rfind("CRITICAL: latency_regression all_reduce/float/2 nodes", 0),
            0u)
      << VerdictLine(problems);
}

Finding At(const std::string& kind, const std::string& subject, Severity severity, int night,
           double value = 0, double baseline = 0) {
  Finding f;
  f.kind = kind;
  f.subject = subject;
  f.severity = severity;
  f.run_started_at = NightIso(night);
  f.value = value;
  f.baseline = baseline;
  f.message = kind + " on night " + std::to_string(night);
  return f;
}

AnalysisResult Result(std::vector<Finding> findings, int newest_night) {
  AnalysisResult r;
  r.cluster = "lab";
  r.findings = std::move(findings);
  r.newest_judged_at = kFirstNight + newest_night * kDay;
  return r;
}

// The worst night is the most severe one, then the largest deviation; the
// latest night describes the problem now.
TEST(ProblemsTest, WorstAndLatestOfAProblem) {
  std::vector<Problem> p =
      FoldProblems(Result({At("busbw_regression", "s", Severity::kWarning, 3, 80, 100),
                           At("busbw_regression", "s", Severity::kWarning, 4, 60, 100),
                           At("busbw_regression", "s", Severity::kWarning, 5, 90, 100),
                           At("busbw_regression", "s", Severity::kWarning, 5, 91, 100)},
                          5),
                   {}, NightIso(6));
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(*p[0].worst.value, 60);
  EXPECT_EQ(p[0].latest.message, "busbw_regression on night 5");
  EXPECT_EQ(p[0].nights, 3);
  EXPECT_EQ(p[0].findings, 4);
  EXPECT_EQ(p[0].state, ProblemState::kOngoing);
}

// A pooled band verdict (issue 32) is the evidence of the problems of the
// series that carry it (z >= 2) when each has one that night; a carrier
// without a problem of its own, or another night, leaves it a problem.
TEST(ProblemsTest, BandVerdictFoldsIntoItsCarryingSeriesProblems) {
  Finding band = At("latency_regression", "latency at small sizes, all multi-node series",
                    Severity::kWarning, 8);
  band.evidence = {{"pooled", {{"z", 5.1}}},
                   {"series",
                    {{{"subject", "2 nodes"}, {"z", 3.2}},
                     {{"subject", "4 nodes"}, {"z", 2.4}},
                     {{"subject", "8 nodes"}, {"z", 0.7}}}}};
  Finding two = At("latency_regression", "2 nodes", Severity::kCritical, 8);
  Finding four = At("latency_jitter", "4 nodes", Severity::kWarning, 8);
  std::vector<Problem> folded = FoldProblems(Result({band, two, four}, 8), {}, NightIso(9));
  ASSERT_EQ(folded.size(), 2u) << VerdictLine(folded);
  for (const Problem& p : folded) {
    SCOPED_TRACE(p.kind + " " + p.subject);
    ASSERT_EQ(p.related.size(), 1u);
    EXPECT_EQ(p.related[0].subject, band.subject);
    EXPECT_EQ(p.findings, 2);
  }
  // The 4-node series had no problem that night: the band is one.
  Finding four_earlier = At("latency_jitter", "4 nodes", Severity::kWarning, 6);
  std::vector<Problem> alone = FoldProblems(Result({band, two, four_earlier}, 8), {}, NightIso(9));
  ASSERT_EQ(alone.size(), 3u) << VerdictLine(alone);
  int band_problems = 0;
  for (const Problem& p : alone) {
    band_problems += p.subject == band.subject;
    EXPECT_TRUE(p.related.empty()) << p.kind << " " << p.subject;
  }
  EXPECT_EQ(band_problems, 1);
  // No series at z >= 2: the top one carries it.
  band.evidence["series"] = {{{"subject", "2 nodes"}, {"z", 1.9}},
                             {{"subject", "4 nodes"}, {"z", 1.6}}};
  std::vector<Problem> top = FoldProblems(Result({band, two}, 8), {}, NightIso(9));
  ASSERT_EQ(top.size(), 1u) << VerdictLine(top);
  EXPECT_EQ(top[0].subject, "2 nodes");
}

TEST(ProblemsTest, NewOnlyOnTheNewestNightAndInfoIsNoProblem) {
  std::vector<Problem> p =
      FoldProblems(Result({At("port_errors", "h:mlx5_0/1", Severity::kCritical, 9),
                           At("latency_jitter", "s", Severity::kInfo, 9)},
                          9),
                   {}, NightIso(10));
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].state, ProblemState::kNew);
  EXPECT_EQ(VerdictLine(p), "CRITICAL: port_errors h:mlx5_0/1 (new, since " +
                                NightIso(9).substr(0, 10) + ", 1 night)");
  EXPECT_EQ(VerdictLine({}), "OK: no problem");
}

// The stored history decides, not the window: tonight's only finding of a
// problem stored open since night 7 is its third night, ongoing since night 7.
TEST(ProblemsTest, StoredHistoryCarriesAProblemPastTheWindow) {
  const AnalysisResult r =
      Result({At("socket_fallback", "all_reduce/4 nodes", Severity::kCritical, 9),
              At("port_errors", "h:mlx5_0/1", Severity::kWarning, 9)},
             9);
  std::vector<Problem> alone = FoldProblems(r, {}, NightIso(10));
  ASSERT_EQ(alone.size(), 2u);
  EXPECT_EQ(alone[0].state, ProblemState::kNew);
  const std::vector<ProblemHistory> history = {
      {"socket_fallback", "all_reduce/4 nodes", NightIso(7), NightIso(8), 2},
      {"port_errors", "other:mlx5_0/1", NightIso(2), NightIso(8), 7},
  };
  std::vector<Problem> p = FoldProblems(r, {}, NightIso(10), history);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].kind, "socket_fallback");
  EXPECT_EQ(p[0].state, ProblemState::kOngoing);
  EXPECT_EQ(p[0].first_seen, NightIso(7));
  EXPECT_EQ(p[0].last_seen, NightIso(9));
  EXPECT_EQ(p[0].nights, 3);
  EXPECT_EQ(VerdictLine(p).rfind("CRITICAL: socket_fallback all_reduce/4 nodes (ongoing, since " +
                                     NightIso(7).substr(0, 10) + ", 3 nights)",
                                 0),
            0u)
      << VerdictLine(p);
  // Another subject's history is not this one's.
  EXPECT_EQ(p[1].state, ProblemState::kNew);
  EXPECT_EQ(p[1].nights, 1);

  // A re-analysis of stored nights counts none twice; a row stored on
  // tonight's night alone keeps the problem new.
  EXPECT_EQ(
      FoldProblems(r, {}, NightIso(10),
                   {{"socket_fallback", "all_reduce/4 nodes", NightIso(7), NightIso(9), 3}})[0]
          .nights,
      3);
  std::vector<Problem> same_night =
      FoldProblems(r, {}, NightIso(10),
                   {{"socket_fallback", "all_reduce/4 nodes", NightIso(9), NightIso(9), 1}});
  EXPECT_EQ(same_night[0].state, ProblemState::kNew);
  EXPECT_EQ(same_night[0].nights, 1);
}

TEST(ProblemsTest, NightsWithHistoryAddsOnlyNightsOutsideTheStoredSpan) {
  const ProblemHistory stored{"k", "s", NightIso(3), NightIso(5), 3};
  EXPECT_EQ(NightsWithHistory(stored, {}), 3);
  const int64_t night3 = NightOf(*ParseIsoSeconds(NightIso(3)));
  EXPECT_EQ(NightsWithHistory(stored, {night3, night3 + 1, night3 + 2}), 3);
  EXPECT_EQ(NightsWithHistory(stored, {night3 - 1, night3 + 3, night3 + 4}), 6);
  // Rows stored before nights were counted: their first and last night.
  EXPECT_EQ(NightsWithHistory({"k", "s", NightIso(3), NightIso(5), 0}, {night3 + 3}), 3);
}

// `fabtrack ack` silences a problem until a date: it stays listed,
// acknowledged, and stops counting; an expired silence does nothing.
TEST(ProblemsTest, AcknowledgedUntilTheDate) {
  AnalysisResult r = Result({At("port_errors", "h:mlx5_0/1", Severity::kCritical, 9),
                             At("shared_nic", "host h", Severity::kWarning, 9)},
                            9);
  const std::string id = FindingFingerprint("lab", "port_errors", "h:mlx5_0/1");
  std::vector<Problem> p =
      FoldProblems(r, {{id, NightIso(20), "cable ordered, RMA 4411"}}, NightIso(10));
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0].kind, "shared_nic");  // open ones first
  EXPECT_EQ(p[1].state, ProblemState::kAcknowledged);
  EXPECT_EQ(p[1].ack->note, "cable ordered, RMA 4411");
  r.problems = p;
  EXPECT_EQ(ExitStatusOf(r), 1);
  EXPECT_EQ(VerdictLine(p).rfind("WARNING: shared_nic host h", 0), 0u);
  p = FoldProblems(r, {{id, NightIso(5), "expired"}}, NightIso(10));
  EXPECT_EQ(p[0].state, ProblemState::kNew);
  r.problems = p;
  EXPECT_EQ(ExitStatusOf(r), 2);
}

}  // namespace
}  // namespace fabtrack::analyzer
