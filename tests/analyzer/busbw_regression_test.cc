#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>

#include "tests/analyzer/input_builder.h"

namespace fabtrack::analyzer {
namespace {

using testing::InputBuilder;

constexpr int64_t kMiB = 1024 * 1024;

// Night-to-night noise like a healthy NDR fabric's: a per-night factor on
// bandwidth and latency plus a little per size.
struct Noise {
  double night_bw = 0.015;
  double night_latency = 0.04;
  double per_size = 0.015;
};

struct Fault {
  double busbw = 0;    // fraction lost
  double latency = 0;  // fraction added
};

// One nccl-tests all_reduce run of `nodes` x 8 GPUs at 8 B .. 4 GiB: time is
// latency plus size over bandwidth, busbw follows from it.
RunView& AddNight(InputBuilder& b, std::mt19937_64& rng, int night, const Noise& noise,
                  Fault fault = {}, int nodes = 16, int sizes = 30) {
  std::normal_distribution<double> night_bw(1, noise.night_bw), night_lat(1, noise.night_latency),
      per_size(1, noise.per_size);
  RunView& run = b.AddRun(night, nodes);
  const double ranks = nodes * 8.0, factor = 2 * (ranks - 1) / ranks;
  const double peak = 370 * std::pow(0.985, std::log2(nodes)) * (1 - fault.busbw) * night_bw(rng);
  const double latency = (18 + 6 * std::log2(nodes)) * (1 + fault.latency) * night_lat(rng);
  for (int i = 0; i < sizes; ++i) {
    const int64_t size = int64_t{8} << i;
    const double t = latency * per_size(rng) + size / (peak / factor * 1e3) * per_size(rng);
    b.AddResult(run, size, t, size / t / 1e3 * factor);
  }
  return run;
}

std::vector<Finding> Detect(InputBuilder& b, const AnalyzerConfig& config = {}) {
  return testing::DetectOnly("busbw_regression", b.Build(), config);
}

const Finding* OfRun(const std::vector<Finding>& findings, int64_t run_id) {
  for (const Finding& f : findings) {
    if (f.run_id == run_id) return &f;
  }
  return nullptr;
}

// A quiet fabric (1% night to night), so that a 10% drop is one for sure.
constexpr Noise kQuiet{.night_bw = 0.01, .night_latency = 0.03, .per_size = 0.01};

TEST(BusbwRegression, TenPercentDropIsReportedTheNightItHappensAndWarnedTheNext) {
  std::mt19937_64 rng(1);
  InputBuilder b;
  for (int night = 0; night < 30; ++night) AddNight(b, rng, night, kQuiet);
  const int64_t first = AddNight(b, rng, 30, kQuiet, {.busbw = 0.1}).id;
  b.JudgeFrom(30);
  auto findings = Detect(b);
  ASSERT_EQ(findings.size(), 1u);
  const Finding& f = findings[0];
  EXPECT_EQ(f.kind, "busbw_regression");
  EXPECT_EQ(f.run_id, first);
  // One run so far: reported (an outlier night looks the same), not alarmed.
  EXPECT_EQ(f.severity, Severity::kInfo);
  EXPECT_EQ(f.evidence["confirmed"], false);
  EXPECT_EQ(f.evidence["robust"]["rule"], "one_run");
  EXPECT_EQ(f.subject, "all_reduce/float/16 nodes x 8/nccl-tests");
  EXPECT_EQ(f.unit, "GB/s");
  EXPECT_NE(f.message.find("busbw at ≥64 MiB fell"), std::string::npos) << f.message;
  EXPECT_NE(f.message.find("next run confirms"), std::string::npos) << f.message;
  EXPECT_NEAR(*f.value / *f.baseline, 0.9, 0.03);
  EXPECT_GE(*f.size_bytes, 64 * kMiB);
  EXPECT_GE(f.evidence["sizes"].size(), 6u);  // 64 MiB .. 4 GiB

  // The next night confirms it: a warning.
  const int64_t second = AddNight(b, rng, 31, kQuiet, {.busbw = 0.1}).id;
  b.JudgeFrom(31);
  findings = Detect(b);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].run_id, second);
  EXPECT_EQ(findings[0].severity, Severity::kWarning);
  EXPECT_EQ(findings[0].evidence["confirmed"], true);

  // Configured to warn on the first run.
  AnalyzerConfig config;
  config.overrides["busbw_regression"]["confirm_runs"] = 1;
  b.JudgeFrom(30);
  findings = Detect(b, config);
  ASSERT_EQ(findings.size(), 2u);
  for (const Finding& f : findings) EXPECT_EQ(f.severity, Severity::kWarning);
}

// Issue 16: a drop of 15% or more beyond the noise is a warning the morning
// it appears; the next night confirms it (still open) or withdraws it (a
// good night: no finding, so the stored one resolves).
TEST(BusbwRegression, LargeDropIsAWarningOnItsFirstNight) {
  std::mt19937_64 rng(11);
  InputBuilder b;
  for (int night = 0; night < 30; ++night) AddNight(b, rng, night, kQuiet);
  const int64_t first = AddNight(b, rng, 30, kQuiet, {.busbw = 0.2}).id;
  b.JudgeFrom(30);
  auto findings = Detect(b);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].run_id, first);
  EXPECT_EQ(findings[0].severity, Severity::kWarning);
  EXPECT_EQ(findings[0].evidence["first_night"], true);
  EXPECT_EQ(findings[0].evidence["confirmed"], false);
  EXPECT_NE(findings[0].message.find("first night"), std::string::npos) << findings[0].message;

  // Withdrawn: the next night is healthy again.
  InputBuilder back = b;
  AddNight(back, rng, 31, kQuiet);
  back.JudgeFrom(31);
  for (const Finding& f : Detect(back)) EXPECT_EQ(f.severity, Severity::kInfo) << f.message;
  // Confirmed: the drop holds.
  const int64_t second = AddNight(b, rng, 31, kQuiet, {.busbw = 0.2}).id;
  b.JudgeFrom(31);
  findings = Detect(b);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].run_id, second);
  EXPECT_EQ(findings[0].severity, Severity::kWarning);
  EXPECT_EQ(findings[0].evidence["confirmed"], true);
}

TEST(BusbwRegression, FivePercentDropIsWarnedWithinTwoNightsMostly) {
  // Night-to-night noise 1.5% on top of 1.5% per size: a 5% drop is about
  // three sigma of one night.
  int found = 0, trials = 100;
  for (int seed = 0; seed < trials; ++seed) {
    std::mt19937_64 rng(100 + seed);
    InputBuilder b;
    for (int night = 0; night < 40; ++night) AddNight(b, rng, night, {});
    for (int night = 40; night < 42; ++night) AddNight(b, rng, night, {}, {.busbw = 0.05});
    b.JudgeFrom(40);
    bool warned = false;
    for (const Finding& f : Detect(b)) warned |= f.severity == Severity::kWarning;
    found += warned;
  }
  EXPECT_GE(found * 100, trials * 45) << found << " of " << trials;
}

TEST(BusbwRegression, NoisyHealthyNightsRaiseAtMostOneAlarmInAHundred) {
  // 60 nights of healthy noise per series, several seeds and node counts:
  // count the warnings over the judged run-nights, with a few one-night 20%
  // outliers among them. Such a night is a first-night warning (issue 16: a
  // drop of 15% or more is shown the morning it appears; the next good night
  // withdraws it), so those are counted apart: noise itself must raise
  // hardly any, and no outlier may become a confirmed alarm.
  int judged = 0, alarms = 0, outliers = 0, first_night = 0;
  for (int seed = 0; seed < 25; ++seed) {
    for (int nodes : {2, 16, 128}) {
      std::mt19937_64 rng(seed * 1000 + nodes);
      std::uniform_real_distribution<double> u(0, 1);
      InputBuilder b;
      for (int night = 0; night < 60; ++night) {
        Fault outlier;
        if (night >= 20 && u(rng) < 0.01) {
          outlier.busbw = 0.2;
          ++outliers;
        }
        AddNight(b, rng, night, {}, outlier, nodes);
      }
      b.JudgeFrom(20);
      judged += 40;
      for (const Finding& f : Detect(b)) {
        if (f.severity < Severity::kWarning) continue;
        (f.evidence.value("first_night", false) ? first_night : alarms) += 1;
      }
    }
  }
  EXPECT_LE(alarms * 100, judged) << alarms << " alarms in " << judged << " run-nights ("
                                  << outliers << " outlier nights)";
  EXPECT_LE(first_night, outliers + judged / 100)
      << first_night << " first-night warnings for " << outliers << " outlier nights";
}

TEST(BusbwRegression, ImprovementIsInfoNeverARegression) {
  std::mt19937_64 rng(2);
  InputBuilder b;
  for (int night = 0; night < 30; ++night) AddNight(b, rng, night, {});
  for (int night = 30; night < 45; ++night) AddNight(b, rng, night, {}, {.busbw = -0.12});
  b.JudgeFrom(30);
  auto findings = Detect(b);
  ASSERT_FALSE(findings.empty());
  std::set<int64_t> runs;
  for (const Finding& f : findings) {
    EXPECT_EQ(f.kind, "busbw_regression");
    EXPECT_EQ(f.severity, Severity::kInfo) << f.message;
    EXPECT_NE(f.message.find("improved"), std::string::npos) << f.message;
    EXPECT_EQ(f.evidence["direction"], "improvement");
    runs.insert(*f.run_id);
  }
  EXPECT_GE(runs.size(), 13u);  // nearly every night of the new level
}

TEST(BusbwRegression, PersistentDropStaysOpenWithTheChangePointAndWhatChanged) {
  std::mt19937_64 rng(3);
  InputBuilder b;
  int64_t change_run = 0;
  for (int night = 0; night < 70; ++night) {
    const bool upgraded = night >= 40;
    RunView& run = AddNight(b, rng, night, {}, {.busbw = upgraded ? 0.12 : 0});
    run.nccl_version = upgraded ? "2.28.9" : "2.27.7";
    if (night == 40) change_run = run.id;
  }
  b.JudgeFrom(40);
  auto findings = Detect(b);
  std::set<int64_t> warned;
  for (const Finding& f : findings) {
    if (f.severity >= Severity::kWarning) warned.insert(*f.run_id);
  }
  // Every night from the second on (the first is the unconfirmed one, unless
  // the night before happened to be low too).
  EXPECT_GE(warned.size(), 29u);
  EXPECT_EQ(*warned.rbegin() - *warned.begin() + 1, static_cast<int64_t>(warned.size()));
  EXPECT_LE(*warned.begin(), change_run + 1);
  // Weeks later the recent baseline has the new level; the change point
  // keeps it open and says what changed.
  const Finding* last = OfRun(findings, change_run + 29);
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(last->severity, Severity::kWarning);
  EXPECT_EQ(last->evidence["robust"]["flagged"], false);
  EXPECT_EQ(last->evidence["change_point"]["run_id"], change_run);
  EXPECT_LE(last->evidence["change_point"]["p_value"].get<double>(), 0.01);
  EXPECT_NEAR(last->evidence["change_point"]["mean_after"].get<double>() /
                  last->evidence["change_point"]["mean_before"].get<double>(),
              0.88, 0.03);
  EXPECT_EQ(last->evidence["what_changed"]["nccl_version"]["before"], "2.27.7");
  EXPECT_EQ(last->evidence["what_changed"]["nccl_version"]["after"], "2.28.9");
  EXPECT_NE(last->message.find("fell 1"), std::string::npos) << last->message;
  EXPECT_NE(last->message.find("change point 2026-12-11 (NCCL 2.27.7 → 2.28.9)"), std::string::npos)
      << last->message;
  EXPECT_NEAR(*last->baseline, last->evidence["change_point"]["mean_before"].get<double>(), 1e-9);
}

TEST(BusbwRegression, FixedDropResolvesWithinTwoGoodNights) {
  std::mt19937_64 rng(4);
  InputBuilder b;
  for (int night = 0; night < 80; ++night) {
    const bool broken = night >= 40 && night < 60;
    AddNight(b, rng, night, {}, {.busbw = broken ? 0.12 : 0});
  }
  b.JudgeFrom(62);  // the fix landed on night 60
  for (const Finding& f : Detect(b)) {
    EXPECT_LT(f.severity, Severity::kWarning) << f.run_started_at.value() << " " << f.message;
    EXPECT_EQ(f.evidence["direction"], "regression") << "a fix is no improvement: " << f.message;
  }
}

// Issue 32: a 5% drop that came with an NCCL upgrade ends after ten nights.
// The first night back (busbw inside its noise again) is no warning: the
// newest three runs and the segment since the change point still carry the
// drop, but the series is where it was (before, every such night read
// "busbw fell 1.1% ... change point (NCCL ...)" about half the time). The
// same history with the drop still there is warned on that night.
TEST(BusbwRegression, TheFirstNightBackInsideTheNoiseIsNoWarning) {
  int warned_back = 0, warned_still = 0;
  constexpr int kSeeds = 20;
  for (int seed = 1; seed <= kSeeds; ++seed) {
    for (const bool ended : {true, false}) {
      std::mt19937_64 rng(seed);
      InputBuilder b;
      int64_t last = 0;
      for (int night = 0; night <= 40; ++night) {
        const bool dropped = night >= 30 && (night < 40 || !ended);
        RunView& run = AddNight(b, rng, night, kQuiet, {.busbw = dropped ? 0.05 : 0}, 8);
        run.nccl_version = night >= 30 ? "2.21.5" : "2.20.3";
        last = run.id;
      }
      b.JudgeFrom(40);
      for (const Finding& f : Detect(b)) {
        if (f.run_id != last || f.severity < Severity::kWarning) continue;
        ++(ended ? warned_back : warned_still);
        if (ended) ADD_FAILURE() << "seed " << seed << ": " << f.message;
      }
    }
  }
  EXPECT_EQ(warned_back, 0);
  EXPECT_GE(warned_still, kSeeds - 1);
}

// Issue 32 item 2, the noise model: a harness run records each size's
// per-iteration CV over its 20 iterations. Forty steady nights (CV 3%: 0.7%
// of within-run error on a fabric quiet to 1% night to night), then two
// nights 8% down. Run as steadily as before, that is 7 sigmas twice: a
// warning. On runs whose iterations scattered by 30% (6.7% of within-run
// error) it is 1.2 of their own sigmas: within-run noise, no regression,
// which the detector raised when it judged every run on the history's
// noise alone (within_run_noise = 0).
RunView& AddHarnessNight(InputBuilder& b, std::mt19937_64& rng, int night, double drop, double cv) {
  RunView& run = AddNight(b, rng, night, kQuiet, {.busbw = drop}, 8);
  run.source = "fabtrack-allreduce";
  run.backend = "nccl";
  run.iters = 20;
  for (ResultPoint& r : b.input().results) {
    if (r.run_id != run.id) continue;
    r.lat_p50_us = r.time_us;
    r.lat_cv = cv;
  }
  return run;
}

TEST(BusbwRegression, ADeviationWithinTheRunsOwnSpreadIsNoRegression) {
  const AnalyzerConfig model_off =
      ParseAnalyzerConfig("[busbw_regression]\nwithin_run_noise = 0\n", "t");
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    for (const double cv : {0.03, 0.3}) {
      std::mt19937_64 rng(seed);
      InputBuilder b;
      for (int night = 0; night < 40; ++night) AddHarnessNight(b, rng, night, 0, 0.03);
      AddHarnessNight(b, rng, 40, 0.08, cv);
      const int64_t last = AddHarnessNight(b, rng, 41, 0.08, cv).id;
      b.JudgeFrom(40);
      for (const bool model : {true, false}) {
        int regressions = 0, warned_last = 0;
        for (const Finding& f : Detect(b, model ? AnalyzerConfig{} : model_off)) {
          if (f.evidence["direction"] != "regression") continue;
          ++regressions;
          if (f.run_id == last && f.severity >= Severity::kWarning) ++warned_last;
        }
        if (cv < 0.1 || !model) {
          EXPECT_EQ(warned_last, 1) << "seed " << seed << " cv " << cv << " model " << model;
        } else {
          EXPECT_EQ(regressions, 0) << "seed " << seed << ": within-run noise flagged";
        }
      }
    }
  }
}

TEST(BusbwRegression, HostChangesAreNamed) {
  std::mt19937_64 rng(5);
  InputBuilder b;
  for (int night = 0; night < 50; ++night) {
    RunView& run = AddNight(b, rng, night, {}, {.busbw = night >= 30 ? 0.15 : 0}, 2);
    if (night >= 30) run.hosts = {"node01", "node17"};
    if (night >= 30) run.transports = {"NET/Socket", "P2P/IPC"};
  }
  b.JudgeFrom(49);
  auto findings = Detect(b);
  ASSERT_EQ(findings.size(), 1u);
  const Finding& f = findings[0];
  EXPECT_EQ(f.severity, Severity::kWarning);
  EXPECT_EQ(f.evidence["what_changed"]["hosts_added"], nlohmann::json({"node17"}));
  EXPECT_EQ(f.evidence["what_changed"]["hosts_removed"], nlohmann::json({"node02"}));
  EXPECT_NE(f.message.find("hosts +node17 -node02"), std::string::npos) << f.message;
  EXPECT_NE(f.message.find("transports NET/IB,P2P/IPC → NET/Socket,P2P/IPC"), std::string::npos)
      << f.message;
}

TEST(BusbwRegression, CriticalFromAQuarter) {
  std::mt19937_64 rng(6);
  InputBuilder b;
  for (int night = 0; night < 30; ++night) AddNight(b, rng, night, {});
  for (int night = 30; night < 32; ++night) AddNight(b, rng, night, {}, {.busbw = 0.4});
  b.JudgeFrom(31);
  auto findings = Detect(b);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].severity, Severity::kCritical);
}

TEST(BusbwRegression, TooLittleHistoryKeepsTheRobustCheckSilent) {
  std::mt19937_64 rng(7);
  InputBuilder b;
  // min_history is 5: the second bad night has 4 runs before it.
  for (int night = 0; night < 3; ++night) AddNight(b, rng, night, {});
  for (int night = 3; night < 5; ++night) AddNight(b, rng, night, {}, {.busbw = 0.3});
  b.JudgeFrom(3);
  EXPECT_TRUE(Detect(b).empty());
}

TEST(BusbwRegression, OnlyJudgedRunsProduceFindings) {
  std::mt19937_64 rng(8);
  InputBuilder b;
  for (int night = 0; night < 30; ++night) AddNight(b, rng, night, {});
  for (int night = 30; night < 35; ++night)
    AddNight(b, rng, night, {}, {.busbw = 0.05 * (night - 29)});
  for (int night = 35; night < 40; ++night) AddNight(b, rng, night, {});
  b.JudgeFrom(40);  // nothing judged
  EXPECT_TRUE(Detect(b).empty());
}

TEST(BusbwRegression, SmallMessageTroubleIsNotABandwidthRegression) {
  std::mt19937_64 rng(9);
  InputBuilder b;
  for (int night = 0; night < 30; ++night) AddNight(b, rng, night, {});
  for (int night = 30; night < 33; ++night) AddNight(b, rng, night, {}, {.latency = 1.0});
  b.JudgeFrom(30);
  EXPECT_TRUE(Detect(b).empty());
}

TEST(BusbwRegression, RunsWithoutLargeSizesUseTheirLargestQuarter) {
  std::mt19937_64 rng(10);
  InputBuilder b;
  // 8 B .. 16 MiB: 22 sizes, none >= 64 MiB; the largest 6 form the band
  // (where latency still counts: halving the bandwidth costs about 20%).
  for (int night = 0; night < 30; ++night) AddNight(b, rng, night, {}, {}, 16, 22);
  for (int night = 30; night < 32; ++night) AddNight(b, rng, night, {}, {.busbw = 0.5}, 16, 22);
  b.JudgeFrom(31);
  auto findings = Detect(b);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_NE(findings[0].message.find("busbw at its largest sizes (512 KiB–16 MiB)"),
            std::string::npos)
      << findings[0].message;
  EXPECT_EQ(findings[0].evidence["sizes"].size(), 6u);
}

TEST(BusbwRegression, PartialRunsCountFailedRunsDoNot) {
  std::mt19937_64 rng(11);
  InputBuilder b;
  for (int night = 0; night < 30; ++night) AddNight(b, rng, night, {});
  // A failed run with garbage numbers between: not part of the series.
  RunView& failed = AddNight(b, rng, 30, {}, {.busbw = 0.9});
  failed.status = "failed";
  // Two partial runs that got to 256 MiB, both 20% down: judged on 64-256 MiB.
  for (int night = 31; night < 33; ++night) {
    RunView& partial = AddNight(b, rng, night, {}, {.busbw = 0.2}, 16, 26);
    partial.status = "partial";
  }
  b.JudgeFrom(30);
  auto findings = Detect(b);
  ASSERT_EQ(findings.size(), 2u);
  EXPECT_EQ(findings[0].severity, Severity::kWarning);  // the second partial run confirms
  EXPECT_EQ(findings[0].evidence["band"]["max_bytes"], 256 * kMiB);
  EXPECT_NE(findings[0].evidence["robust"]["previous_run_id"], failed.id);
}

TEST(BusbwRegression, SeriesAreJudgedApart) {
  std::mt19937_64 rng(12);
  InputBuilder b;
  for (int night = 0; night < 30; ++night) {
    AddNight(b, rng, night, {}, {}, 4);
    AddNight(b, rng, night, {}, {}, 8);
  }
  for (int night = 30; night < 32; ++night) {
    AddNight(b, rng, night, {}, {}, 4);
    AddNight(b, rng, night, {}, {.busbw = 0.2}, 8);
  }
  b.JudgeFrom(31);
  auto findings = Detect(b);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].subject, "all_reduce/float/8 nodes x 8/nccl-tests");
  EXPECT_EQ(findings[0].nodes, 8);
}

// A series of known noise: 30 runs alternating 3% above and below 100 GB/s,
// so the night-to-night noise is 1.4826 / sqrt(2) x 6% = 6.29% of the level
// (every successive difference is 6%), estimated from 29 differences, and
// the baseline median is 100. Then two runs `sigmas` x that noise below it.
std::vector<Finding> TwoRunsBelowAlternatingSeries(double sigmas) {
  InputBuilder b;
  for (int night = 0; night < 30; ++night) {
    RunView& run = b.AddRun(night, 16);
    const double busbw = night % 2 ? 97 : 103;
    b.AddResult(run, 64 * kMiB, 64 * kMiB / busbw / 1e3, busbw);
  }
  const double noise = 1.4826 / std::sqrt(2.0) * 0.06;
  for (int night = 30; night < 32; ++night) {
    RunView& run = b.AddRun(night, 16);
    const double busbw = 100 * (1 - sigmas * noise);
    b.AddResult(run, 64 * kMiB, 64 * kMiB / busbw / 1e3, busbw);
  }
  b.JudgeFrom(30);
  return Detect(b);
}

// Two runs in a row just past confirm_z (2, one series) in units of the
// estimated noise: before the noise model counted the baseline median's error
// (its variance is pi / (2 x 14) of a run's), the noise estimate's (about 10
// degrees of freedom from 29 differences) and the two runs sharing the
// median, this was a warning; their real joint tail is several times the
// 2.3% x 2.3% that confirm_z stands for, so it is not.
TEST(BusbwRegression, TwoRunsJustPastConfirmZAgainstAnUncertainBaselineAreNoAlarm) {
  for (const Finding& f : TwoRunsBelowAlternatingSeries(2.2)) {
    EXPECT_LT(f.severity, Severity::kWarning) << f.message;
  }
  // Well past it, the same two runs are (z 3.2 before the model: about 2.5
  // after it for each run, 2.4 for the pair).
  const std::vector<Finding> findings = TwoRunsBelowAlternatingSeries(3.2);
  ASSERT_EQ(findings.size(), 1u);
  const Finding& f = findings[0];
  EXPECT_EQ(f.severity, Severity::kWarning);
  EXPECT_EQ(f.evidence["robust"]["rule"], "two_runs");
  const double z = f.evidence["robust"]["z"], pair_z = f.evidence["robust"]["pair_z"];
  EXPECT_GT(z, 2.2);
  EXPECT_LT(z, 2.8);
  EXPECT_LT(pair_z, z);
  EXPECT_GE(pair_z, 2);
}

// The sixth run of a series has five runs of history: their median and MAD
// are all there is, and five runs that happened to agree within 0.4% floor
// the scale at 1%. A 7% rise then looked like z 6.8: an improvement on a
// noise estimate of about two degrees of freedom. Not reported now.
TEST(BusbwRegression, SixthRunImprovementOnAnUnestimatedNoiseIsNotReported) {
  InputBuilder b;
  const double values[] = {100, 100.2, 99.8, 106, 106.5, 107};
  for (int night = 0; night < 6; ++night) {
    RunView& run = b.AddRun(night, 16);
    b.AddResult(run, 64 * kMiB, 64 * kMiB / values[night] / 1e3, values[night]);
  }
  b.JudgeFrom(5);
  const std::vector<Finding> findings = Detect(b);
  for (const Finding& f : findings) ADD_FAILURE() << f.message;
}

}  // namespace
}  // namespace fabtrack::analyzer
