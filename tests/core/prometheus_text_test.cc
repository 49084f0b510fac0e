#include "core/prometheus_text.h"

#include <gtest/gtest.h>

namespace fabtrack {
namespace {

// The exposition format (prometheus/docs, "Text-based format"): label values
// escape backslash, double quote and line feed; HELP escapes backslash and
// line feed only.
TEST(PrometheusTextTest, EscapesLabelValues) {
  EXPECT_EQ(EscapePrometheusLabel("mlx5_0"), "mlx5_0");
  EXPECT_EQ(EscapePrometheusLabel(R"(C:\DIR\FILE.TXT)"), R"(C:\\DIR\\FILE.TXT)");
  EXPECT_EQ(EscapePrometheusLabel("say \"hi\"\nbye"), R"(say \"hi\"\nbye)");
  EXPECT_EQ(EscapePrometheusLabel(""), "");
  EXPECT_EQ(EscapePrometheusLabel("tab\tand ünïcode"), "tab\tand ünïcode");
}

TEST(PrometheusTextTest, HelpKeepsQuotes) {
  std::string out = "# HELP x ";
  AppendPrometheusEscaped(&out, "a \"quoted\" \\ path\n", PrometheusText::kHelp);
  EXPECT_EQ(out, R"(# HELP x a "quoted" \\ path\n)");
}

}  // namespace
}  // namespace fabtrack
