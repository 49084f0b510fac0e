#include <gtest/gtest.h>

#include "analyzer/input_index.h"
#include "tests/analyzer/input_builder.h"

namespace fabtrack::analyzer {
namespace {

using testing::DetectOnly;
using testing::InputBuilder;

TEST(GdrdmaDisabled, OneHostWithoutGdrIsNamed) {
  InputBuilder b;
  RunView& run = b.AddRun(0, 3);
  b.AddChannel(run, "node01", 0, "NET/IB", 0, 4, true);
  b.AddChannel(run, "node02", 8, "NET/IB", 0, 4, false);
  b.AddChannel(run, "node03", 16, "NET/IB", 0, 4, true);
  auto findings = DetectOnly("gdrdma_disabled", b.Build());
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].host, "node02");
  EXPECT_EQ(findings[0].subject, "host node02");
  EXPECT_EQ(findings[0].severity, Severity::kWarning);
  EXPECT_EQ(findings[0].value, 4);
}

TEST(GdrdmaDisabled, WholeRunWithoutGdrIsOneSeriesFinding) {
  InputBuilder b;
  RunView& run = b.AddRun(0, 2);
  b.AddChannel(run, "node01", 0, "NET/IB", 0, 4, false);
  b.AddChannel(run, "node02", 8, "NET/IB", 0, 4, false);
  auto findings = DetectOnly("gdrdma_disabled", b.Build());
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].subject, SeriesName(run));
  EXPECT_FALSE(findings[0].host);
}

TEST(GdrdmaDisabled, AllGdrAndSocketChannelsAreClean) {
  InputBuilder b;
  RunView& run = b.AddRun(0, 2);
  b.AddChannel(run, "node01", 0, "NET/IB", 0, 4, true);
  b.AddChannel(run, "node02", 8, "NET/IB", 0, 4, true);
  b.AddChannel(run, "node02", 9, "NET/Socket", 0, 4, false);  // socket_fallback's business
  EXPECT_TRUE(DetectOnly("gdrdma_disabled", b.Build()).empty());
}

TEST(GdrdmaDisabled, LogSaysDisabledWithoutChannelLines) {
  InputBuilder b;
  RunView& run = b.AddRun(0, 2);
  run.gdrdma = false;
  auto findings = DetectOnly("gdrdma_disabled", b.Build());
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_NE(findings[0].message.find("disabled"), std::string::npos);
}

}  // namespace
}  // namespace fabtrack::analyzer
