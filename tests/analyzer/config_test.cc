#include "analyzer/config.h"

#include <gtest/gtest.h>

#include "analyzer/detector.h"

namespace fabtrack::analyzer {
namespace {

TEST(AnalyzerConfig, OverridesAndDisables) {
  AnalyzerConfig c = ParseAnalyzerConfig(
      "# nightly thresholds\n[scaling_drop]\nmin_efficiency = 0.7  # lab fabric\n\n"
      "[shared_nic]\nenabled = false\n",
      "a.conf");
  EXPECT_DOUBLE_EQ(c.SettingsFor("scaling_drop")["min_efficiency"], 0.7);
  EXPECT_FALSE(c.Enabled("shared_nic"));
  EXPECT_TRUE(c.Enabled("scaling_drop"));
}

TEST(AnalyzerConfig, ErrorsNameFileAndLine) {
  auto error = [](const std::string& text) {
    try {
      ParseAnalyzerConfig(text, "x.conf");
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error("[nope]\n").substr(0, 9), "x.conf:1:");
  EXPECT_NE(error("\n[scaling_drop]\nmin_effiency = 1\n").find("x.conf:3: unknown setting"),
            std::string::npos);
  EXPECT_NE(error("[scaling_drop]\nmin_efficiency = high\n").find("x.conf:2:"), std::string::npos);
  EXPECT_NE(error("min_efficiency = 1\n").find("outside a [detector]"), std::string::npos);
  EXPECT_NE(error("[scaling_drop]\nenabled = maybe\n").find("true or false"), std::string::npos);
}

// What --print-config prints reads back to exactly the defaults.
TEST(AnalyzerConfig, DefaultTextRoundTrips) {
  std::string text = DefaultConfigText();
  AnalyzerConfig parsed = ParseAnalyzerConfig(text, "defaults.conf");
  for (const DetectorInfo& d : Detectors()) {
    for (const Param& p : d.params) {
      EXPECT_EQ(parsed.SettingsFor(d.name)[p.key], p.default_value) << d.name << "." << p.key;
      EXPECT_EQ(parsed.overrides.at(d.name).at(p.key), p.default_value);
    }
  }
}

}  // namespace
}  // namespace fabtrack::analyzer
