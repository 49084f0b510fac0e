// How the text and HTML reports print a finding's value and baseline:
// counts (hosts, ranks, channels) as whole numbers, measurements with two
// decimals.
#include "analyzer/report/text_report.h"

#include <gtest/gtest.h>

#include "analyzer/report/html_report.h"
#include "analyzer/run_facts.h"
#include "tests/analyzer/input_builder.h"

namespace fabtrack::analyzer {
namespace {

TEST(FormatMeasure, CountsWithoutDecimalsMeasurementsWithTwo) {
  EXPECT_EQ(FormatMeasure(4), "4");
  EXPECT_EQ(FormatMeasure(0), "0");
  EXPECT_EQ(FormatMeasure(-3), "-3");
  EXPECT_EQ(FormatMeasure(12.5), "12.50");
  EXPECT_EQ(FormatMeasure(0.004), "0.00");
  EXPECT_EQ(FormatMeasure(1e20), "100000000000000000000.00");
}

// A problem whose worst night is another run than its newest: "worst: run
// 1, 4 hosts without RDMA".
TEST(TextReport, TheWorstNightsCountHasNoDecimals) {
  AnalysisResult result;
  result.cluster = "lab";
  result.judged_runs = 1;
  Problem p;
  p.id = "abc";
  p.kind = "rdma_absent";
  p.subject = "all_reduce float 4 nodes";
  p.severity = Severity::kCritical;
  p.first_seen = "2026-12-01T02:00:00Z";
  p.last_seen = "2026-12-02T02:00:00Z";
  p.nights = 2;
  p.worst.run_id = 1;
  p.worst.value = 4;
  p.worst.unit = "hosts without RDMA";
  p.latest.run_id = 2;
  p.latest.value = 2;
  p.latest.message = "RDMA unavailable on a multi-node run";
  result.problems.push_back(p);
  const std::string text = TextReport(result, "2026-12-02T00:00:00Z");
  EXPECT_NE(text.find("worst: run 1, 4 hosts without RDMA"), std::string::npos) << text;
  EXPECT_EQ(text.find("4.00"), std::string::npos) << text;
}

TEST(HtmlReport, FindingCountsHaveNoDecimals) {
  testing::InputBuilder b;
  b.AddRun(0, 2);
  InputIndex index(b.Build());
  AnalysisResult result;
  result.cluster = "lab";
  Finding f;
  f.kind = "socket_fallback";
  f.subject = "all_reduce float 2 nodes";
  f.severity = Severity::kCritical;
  f.value = 3;
  f.baseline = 0;
  f.unit = "ranks on NET/Socket";
  result.findings.push_back(f);
  f.kind = "busbw_regression";
  f.value = 41.25;
  f.baseline = 48;
  f.unit = "GB/s";
  result.findings.push_back(f);
  const std::string html = RenderHtmlReport(index, result);
  EXPECT_NE(html.find(">3 ranks on NET/Socket</td><td class=\"num\">0</td>"), std::string::npos);
  EXPECT_NE(html.find(">41.25 GB/s</td><td class=\"num\">48</td>"), std::string::npos);
  EXPECT_EQ(html.find("3.00 ranks"), std::string::npos);
}

}  // namespace
}  // namespace fabtrack::analyzer
