// locate_suspect: a stored `fabtrack locate` verdict of the judged window
// that names a suspect is a finding about its top suspect (critical when
// locate settled on a strong one), tied to the newest linked run; older
// verdicts and clean ones raise nothing.
#include <gtest/gtest.h>

#include "tests/analyzer/input_builder.h"

namespace fabtrack::analyzer {
namespace {

using testing::InputBuilder;
using testing::kDay;
using testing::kFirstNight;

LocateView Verdict(int64_t id, double located_at, std::vector<LocateSuspect> suspects,
                   int exit_status, std::vector<int64_t> runs) {
  LocateView v;
  v.id = id;
  v.located_at = located_at;
  v.record.cluster = "c";
  v.record.located_at = testing::IsoOf(located_at);
  v.record.hosts = {"node01", "node02", "node03", "node04"};
  v.record.verdict.suspects = std::move(suspects);
  v.record.verdict.settled = true;
  v.record.verdict.rounds = 3;
  v.record.seconds = 21.4;
  v.record.exit_status = exit_status;
  v.record.run_ids = std::move(runs);
  return v;
}

TEST(LocateSuspect, JudgedVerdictWithASuspectIsAFinding) {
  InputBuilder b;
  const int64_t old_id = b.AddRun(0, 4).id;
  const int64_t flagged_id = b.AddRun(5, 4).id;
  b.JudgeFrom(5);
  const double tonight = kFirstNight + 5 * kDay + 600;
  b.input().locate_verdicts = {
      Verdict(7, tonight,
              {{.kind = "uplink", .name = "leaf2-spine", .score = 9.1, .evidence = {"e1"}},
               {.kind = "node", .name = "node03", .score = 2.0, .evidence = {}}},
              2, {old_id, flagged_id, 999}),
      Verdict(6, tonight - 60, {}, 0, {flagged_id}),  // clean: nothing
      Verdict(5, kFirstNight + 600, {{.kind = "node", .name = "node02", .score = 8}}, 2,
              {old_id}),  // before the window: history
  };
  std::vector<Finding> f = testing::DetectOnly("locate_suspect", b.Build());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].kind, "locate_suspect");
  EXPECT_EQ(f[0].subject, "uplink leaf2-spine");
  EXPECT_EQ(f[0].severity, Severity::kCritical);
  EXPECT_EQ(f[0].run_id, flagged_id);  // the newest linked run the analysis knows
  EXPECT_EQ(f[0].nodes, 4);
  EXPECT_FALSE(f[0].host.has_value());
  EXPECT_EQ(f[0].value, 9.1);
  EXPECT_EQ(f[0].message,
            "fabtrack locate over 4 nodes (3 rounds, 21 s): the uplink leaf2-spine is slow "
            "(score 9.1); or else node node03 is slow (score 2.0)");
  EXPECT_EQ(f[0].evidence["locate_verdict_id"], 7);
  EXPECT_EQ(f[0].evidence["suspects"].size(), 2u);
}

TEST(LocateSuspect, WeakOrUnsettledSuspectIsAWarningAboutTheNode) {
  InputBuilder b;
  b.AddRun(5, 4);
  b.JudgeFrom(5);
  LocateView v = Verdict(1, kFirstNight + 5 * kDay + 600,
                         {{.kind = "node", .name = "node04", .score = 4.5, .evidence = {}}}, 1, {});
  v.record.verdict.settled = false;
  v.record.budget_spent = true;
  b.input().locate_verdicts = {v};
  std::vector<Finding> f = testing::DetectOnly("locate_suspect", b.Build());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::kWarning);
  EXPECT_EQ(f[0].host, "node04");
  EXPECT_FALSE(f[0].run_id.has_value());
  EXPECT_NE(f[0].message.find("not settled"), std::string::npos) << f[0].message;
  EXPECT_NE(f[0].message.find("stopped by its time budget"), std::string::npos) << f[0].message;
}

}  // namespace
}  // namespace fabtrack::analyzer
