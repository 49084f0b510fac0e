// midsize_busbw_regression: busbw over the medium band (64 KiB < size < 64
// MiB), per series and pooled over the night's multi-node series; a shift
// only at small or large sizes is the other bands', not this one's.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "tests/analyzer/input_builder.h"

namespace fabtrack::analyzer {
namespace {

using testing::InputBuilder;

constexpr int64_t kKiB = 1024, kMiB = 1024 * 1024;

struct Noise {
  double night_bw = 0.015;
  double night_latency = 0.04;
  double per_size = 0.015;
};

// A quiet fabric: 1% busbw, 1.5% latency night to night.
constexpr Noise kQuiet{.night_bw = 0.01, .night_latency = 0.015, .per_size = 0.01};

// busbw lost per band (time x 1 / (1 - loss)): <= 64 KiB, 64 KiB < size < 64
// MiB, >= 64 MiB.
struct Shift {
  double small = 0, medium = 0, large = 0;
};

// One nccl-tests all_reduce run of `nodes` x 8 GPUs at 8 B << first .. 8 B
// << (first + sizes - 1): time is latency plus size over bandwidth.
RunView& AddNight(InputBuilder& b, std::mt19937_64& rng, int night, const Noise& noise,
                  Shift shift = {}, int nodes = 8, int first = 0, int sizes = 30) {
  std::normal_distribution<double> night_bw(1, noise.night_bw), night_lat(1, noise.night_latency),
      per_size(1, noise.per_size);
  RunView& run = b.AddRun(night, nodes, nodes * 60.0);
  const double ranks = nodes * 8.0, factor = 2 * (ranks - 1) / ranks;
  const double peak = 370 * std::pow(0.985, std::log2(nodes)) * night_bw(rng);
  const double latency = (18 + 6 * std::log2(nodes)) * night_lat(rng);
  for (int i = first; i < first + sizes; ++i) {
    const int64_t size = int64_t{8} << i;
    double t = latency * per_size(rng) + size / (peak / factor * 1e3) * per_size(rng);
    const double loss = size <= 64 * kKiB  ? shift.small
                        : size < 64 * kMiB ? shift.medium
                                           : shift.large;
    t /= 1 - loss;
    b.AddResult(run, size, t, size / t / 1e3 * factor);
  }
  return run;
}

constexpr int kNodeCounts[] = {2, 4, 8, 16};

// `nights` nights of every node count, `shift` from `from` on.
void AddHistory(InputBuilder& b, std::mt19937_64& rng, int nights, const Noise& noise,
                int from = 1 << 30, Shift shift = {}) {
  for (int night = 0; night < nights; ++night) {
    for (int nodes : kNodeCounts) {
      AddNight(b, rng, night, noise, night >= from ? shift : Shift{}, nodes);
    }
  }
}

std::vector<Finding> Detect(const std::string& detector, InputBuilder& b,
                            const AnalyzerConfig& config = {}) {
  return testing::DetectOnly(detector, b.Build(), config);
}

int Alarms(const std::vector<Finding>& findings) {
  int n = 0;
  for (const Finding& f : findings) n += f.severity >= Severity::kWarning;
  return n;
}

const Finding* Pooled(const std::vector<Finding>& findings) {
  for (const Finding& f : findings) {
    if (f.subject == "busbw at medium sizes, all multi-node series") return &f;
  }
  return nullptr;
}

// A 4% busbw loss at 128 KiB .. 32 MiB on every node count (LL128 lost, a
// tuning change): the two other bands see nothing, no series alone passes its
// thresholds (min_magnitude 5%), the medium band's pooled verdict is a warning
// by its second night with its series and each one's sizes behind it.
TEST(MidsizeBusbwRegression, ACoherentShiftAtMediumSizesOnlyIsFound) {
  std::mt19937_64 rng(11);
  InputBuilder b;
  AddHistory(b, rng, 32, kQuiet, 30, {.medium = 0.04});
  b.JudgeFrom(30);
  const std::vector<Finding> findings = Detect("midsize_busbw_regression", b);
  const Finding* pooled = Pooled(findings);
  ASSERT_NE(pooled, nullptr) << findings.size() << " findings, none pooled";
  EXPECT_EQ(pooled->kind, "midsize_busbw_regression");
  EXPECT_GE(pooled->severity, Severity::kWarning);
  EXPECT_EQ(pooled->evidence["pooled"]["series"], 4);
  EXPECT_NEAR(pooled->evidence["pooled"]["change"].get<double>(), 0.04, 0.015);
  EXPECT_EQ(pooled->message.rfind("busbw at medium sizes fell ", 0), 0u) << pooled->message;
  // Each series' part carries the sign of its own move: busbw fell, so "-".
  for (int nodes : {2, 4, 8, 16}) {
    EXPECT_NE(pooled->message.find(" " + std::to_string(nodes) + " nodes -"), std::string::npos)
        << pooled->message;
  }
  ASSERT_EQ(pooled->evidence["series"].size(), 4u);
  // Each series' part, size by size: the nine sizes of the band (128 KiB ..
  // 32 MiB), each about 4% worse.
  for (const nlohmann::json& series : pooled->evidence["series"]) {
    const nlohmann::json& sizes = series["sizes"];
    ASSERT_EQ(sizes.size(), 9u) << series.dump();
    EXPECT_EQ(sizes.front()["size_bytes"], 128 * kKiB);
    EXPECT_EQ(sizes.back()["size_bytes"], 32 * kMiB);
    double mean = 0;
    for (const nlohmann::json& size : sizes) mean += size["change"].get<double>() / 9;
    EXPECT_NEAR(mean, 0.04, 0.02) << series.dump();
  }
  // Neither neighbouring band sees it.
  EXPECT_EQ(Alarms(Detect("busbw_regression", b)), 0);
  EXPECT_EQ(Alarms(Detect("latency_regression", b)), 0);
}

// A larger loss is each series' own finding too, its sizes those of the band
// (and its words the band's sizes).
TEST(MidsizeBusbwRegression, ALargeShiftIsEverySeriesOwnFindingWithItsSizes) {
  std::mt19937_64 rng(11);
  InputBuilder b;
  AddHistory(b, rng, 32, kQuiet, 30, {.medium = 0.12});
  b.JudgeFrom(30);
  int per_series = 0;
  for (const Finding& f : Detect("midsize_busbw_regression", b)) {
    if (!f.evidence.contains("band")) continue;
    ++per_series;
    EXPECT_EQ(f.evidence["band"]["min_bytes"], 128 * kKiB) << f.message;
    EXPECT_EQ(f.evidence["band"]["max_bytes"], 32 * kMiB) << f.message;
    EXPECT_EQ(f.evidence["band"]["rule"], "64 KiB < sizes < 64 MiB");
    EXPECT_EQ(f.evidence["sizes"].size(), 9u);
    EXPECT_NE(f.message.find("busbw at 128 KiB–32 MiB fell "), std::string::npos) << f.message;
  }
  EXPECT_GE(per_series, 4);
}

// A shift at small sizes only, or at large sizes only, is the latency or the
// large-message band's: no medium finding of any severity, while the band it
// is in finds it.
TEST(MidsizeBusbwRegression, AShiftOnlyAtSmallOrLargeSizesIsNoMediumFinding) {
  for (Shift shift : {Shift{.small = 0.2}, Shift{.large = 0.1}}) {
    std::mt19937_64 rng(5);
    InputBuilder b;
    AddHistory(b, rng, 34, kQuiet, 30, shift);
    b.JudgeFrom(30);
    EXPECT_TRUE(Detect("midsize_busbw_regression", b).empty())
        << Detect("midsize_busbw_regression", b).front().message;
    EXPECT_GT(Alarms(Detect(shift.small > 0 ? "latency_regression" : "busbw_regression", b)), 0);
  }
}

// Sweeps without a medium size have no medium point: the band does not fall
// back on a share of the sizes as the other two do.
TEST(MidsizeBusbwRegression, RunsWithoutMediumSizesAreNotJudged) {
  std::mt19937_64 rng(7);
  InputBuilder b;
  for (int night = 0; night < 34; ++night) {
    for (int nodes : kNodeCounts) {
      AddNight(b, rng, night, kQuiet, night >= 30 ? Shift{.small = 0.3} : Shift{}, nodes, 0, 14);
    }
  }
  b.JudgeFrom(30);
  EXPECT_TRUE(Detect("midsize_busbw_regression", b).empty());
  EXPECT_GT(Alarms(Detect("latency_regression", b)), 0);
}

TEST(MidsizeBusbwRegression, HealthyNoiseRaisesAtMostOneAlarmInAHundredAndNoPooledOne) {
  int judged = 0, alarms = 0, pooled = 0;
  for (int seed = 0; seed < 10; ++seed) {
    std::mt19937_64 rng(seed * 101 + 3);
    InputBuilder b;
    AddHistory(b, rng, 60, Noise{});
    b.JudgeFrom(20);
    judged += 40 * 4;
    const std::vector<Finding> findings = Detect("midsize_busbw_regression", b);
    alarms += Alarms(findings);
    for (const Finding& f : findings) pooled += Pooled({f}) != nullptr;
  }
  EXPECT_LE(alarms * 100, judged) << alarms << " alarms in " << judged << " run-nights";
  EXPECT_EQ(pooled, 0);
}

// The bounds are settings: moved up to 4 MiB, the band starts at 8 MiB.
TEST(MidsizeBusbwRegression, TheBandsBoundsAreSettings) {
  std::mt19937_64 rng(11);
  InputBuilder b;
  AddHistory(b, rng, 32, kQuiet, 30, {.medium = 0.1});
  b.JudgeFrom(30);
  const AnalyzerConfig config =
      ParseAnalyzerConfig("[midsize_busbw_regression]\nabove_size_bytes = 4194304\n", "t");
  int per_series = 0;
  for (const Finding& f : Detect("midsize_busbw_regression", b, config)) {
    if (!f.evidence.contains("band")) continue;
    ++per_series;
    EXPECT_EQ(f.evidence["band"]["min_bytes"], 8 * kMiB);
    EXPECT_EQ(f.evidence["band"]["rule"], "4 MiB < sizes < 64 MiB");
  }
  EXPECT_GT(per_series, 0);
}

}  // namespace
}  // namespace fabtrack::analyzer
