// port_errors, link_degraded and congestion on built port windows.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "analyzer/input_index.h"
#include "analyzer/port_window.h"
#include "tests/analyzer/input_builder.h"

namespace fabtrack::analyzer {
namespace {

using testing::DetectOnly;
using testing::InputBuilder;

// Every port of a 2-node run, all counters quiet and links ACTIVE at 400.
RunView& CleanRun(InputBuilder& b) {
  RunView& run = b.AddRun(0, 2);
  for (const char* host : {"node01", "node02"}) {
    for (int hca = 0; hca < 4; ++hca) {
      const std::string dev = "mlx5_" + std::to_string(hca);
      for (const char* c : {"symbol_error", "link_downed", "port_rcv_errors", "port_xmit_wait",
                            "hw:out_of_sequence"}) {
        b.AddPortDelta(run, host, dev, c, 0);
      }
      b.AddPortState(run, host, dev, "ACTIVE", 400);
    }
  }
  return run;
}

TEST(PortErrors, QuietWindowIsClean) {
  InputBuilder b;
  CleanRun(b);
  EXPECT_TRUE(DetectOnly("port_errors", b.Build()).empty());
  EXPECT_TRUE(DetectOnly("link_degraded", b.input()).empty());
  EXPECT_TRUE(DetectOnly("congestion", b.input()).empty());
}

TEST(PortErrors, SymbolErrorsAreAWarningLinkDownIsCritical) {
  InputBuilder b;
  RunView& run = CleanRun(b);
  b.AddPortDelta(run, "node02", "mlx5_1", "symbol_error", 250);
  b.AddPortDelta(run, "node01", "mlx5_3", "link_downed", 1);
  b.AddPortDelta(run, "node01", "mlx5_2", "symbol_error", 3);  // FEC-corrected noise
  auto findings = DetectOnly("port_errors", b.Build());
  ASSERT_EQ(findings.size(), 2u);
  EXPECT_EQ(findings[0].severity, Severity::kCritical);
  EXPECT_EQ(findings[0].subject, "node01:mlx5_3/1");
  EXPECT_EQ(findings[1].severity, Severity::kWarning);
  EXPECT_EQ(findings[1].host, "node02");
  EXPECT_EQ(findings[1].device, "mlx5_1");
  EXPECT_EQ(findings[1].value, 250);
  EXPECT_NE(findings[1].message.find("symbol_error +250"), std::string::npos);
  EXPECT_NE(findings[1].message.find("during run"), std::string::npos);
}

TEST(PortErrors, SaturatedCounterIsReportedNotZero) {
  InputBuilder b;
  RunView& run = CleanRun(b);
  b.AddPortDelta(run, "node01", "mlx5_0", "port_rcv_errors", 0, /*saturated=*/true);
  auto findings = DetectOnly("port_errors", b.Build());
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_NE(findings[0].message.find("saturated"), std::string::npos);
  EXPECT_EQ(findings[0].evidence["counters"]["port_rcv_errors"], "saturated");
}

TEST(PortErrors, JoinedWithTheRunWhoseBusbwFell) {
  InputBuilder b;
  for (int night = 0; night < 5; ++night) {
    RunView& r = b.AddRun(night, 2);
    b.AddResult(r, int64_t{1} << 30, 5000, 200);
  }
  RunView& bad = b.AddRun(5, 2);
  b.AddResult(bad, int64_t{1} << 30, 6000, 150);
  b.AddPortDelta(bad, "node02", "mlx5_0", "symbol_error", 5000);
  b.JudgeFrom(5);
  auto findings = DetectOnly("port_errors", b.Build());
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_NE(findings[0].message.find("busbw was 25% below its baseline"), std::string::npos)
      << findings[0].message;
}

TEST(LinkDegraded, PortDownAndPortTrainedAtHalfRate) {
  InputBuilder b;
  RunView& run = CleanRun(b);
  b.input().port_states.clear();
  b.input().port_inventory.clear();
  for (int hca = 0; hca < 4; ++hca) {
    b.AddPortState(run, "node01", "mlx5_" + std::to_string(hca), "ACTIVE", hca == 3 ? 200 : 400);
    b.AddPortState(run, "node02", "mlx5_" + std::to_string(hca), hca == 1 ? "DOWN" : "ACTIVE", 400);
  }
  auto findings = DetectOnly("link_degraded", b.Build());
  ASSERT_EQ(findings.size(), 2u);
  EXPECT_EQ(findings[0].severity, Severity::kCritical);
  EXPECT_EQ(findings[0].subject, "node02:mlx5_1/1");
  EXPECT_EQ(findings[1].subject, "node01:mlx5_3/1");
  EXPECT_EQ(findings[1].value, 200);
  EXPECT_EQ(findings[1].baseline, 400);
}

TEST(Congestion, RoceCnpAndPfcStorm) {
  InputBuilder b;
  RunView& run = CleanRun(b);
  b.AddPortDelta(run, "node02", "mlx5_0", "hw:np_cnp_sent", 3000000);         // 10000/s
  b.AddPortDelta(run, "node02", "mlx5_0", "ethtool:rx_prio3_pause", 900000);  // 3000/s
  b.AddPortDelta(run, "node01", "mlx5_0", "hw:np_cnp_sent", 3000);            // 10/s: fine
  auto findings = DetectOnly("congestion", b.Build());
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].subject, "node02:mlx5_0/1");
  EXPECT_NE(findings[0].message.find("CNP/ECN 10000/s"), std::string::npos) << findings[0].message;
  EXPECT_NE(findings[0].message.find("PFC pause 3000/s"), std::string::npos);
}

TEST(Congestion, CreditWaitOnInfiniBand) {
  InputBuilder b;
  RunView& run = CleanRun(b);
  b.AddPortDelta(run, "node01", "mlx5_2", "port_xmit_wait", int64_t{3} << 32);
  auto findings = DetectOnly("congestion", b.Build());
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].unit, "xmit_wait per second");
}

// A window between two snapshots of a port (imported dumps), ending at
// `end` (seconds into the judged span), per_second over its 600 s.
void AddSnapshotDelta(InputBuilder& b, const std::string& device, const std::string& counter,
                      std::optional<int64_t> delta, const std::string& end_iso) {
  SnapshotDeltaView s;
  s.window_end = b.input().judge_from + 900;
  s.window_start = s.window_end - 600;
  s.window_start_iso = "2026-12-01T01:50:00Z";
  s.window_end_iso = end_iso;
  s.delta.host = "gpu-d04";
  s.delta.device = device;
  s.delta.port = 1;
  s.delta.counter = counter;
  s.delta.delta = delta;
  if (delta) s.delta.per_second = static_cast<double>(*delta) / 600.0;
  s.delta.saturated = !delta;
  b.input().snapshot_deltas.push_back(s);
}

TEST(PortErrors, WindowsBetweenSnapshotsAreJudgedWithoutARun) {
  InputBuilder b;
  CleanRun(b);
  AddSnapshotDelta(b, "mlx5_2", "symbol_error", 1500, "2026-12-01T02:00:00Z");
  AddSnapshotDelta(b, "mlx5_2", "port_xmit_wait", 6000000000, "2026-12-01T02:00:00Z");
  AddSnapshotDelta(b, "mlx5_3", "port_xmit_wait", std::nullopt, "2026-12-01T02:00:00Z");
  auto errors = DetectOnly("port_errors", b.Build());
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].severity, Severity::kCritical);  // 1500 >= critical_errors
  EXPECT_EQ(errors[0].subject, "gpu-d04:mlx5_2/1");
  EXPECT_FALSE(errors[0].run_id.has_value());
  EXPECT_EQ(errors[0].run_started_at, "2026-12-01T02:00:00Z");  // seen when the window ended
  EXPECT_NE(errors[0].message.find("between snapshots 2026-12-01T01:50:00Z and "
                                   "2026-12-01T02:00:00Z"),
            std::string::npos)
      << errors[0].message;
  // 1e7 ticks/s is congestion; mlx5_3's saturated xmit_wait has no rate.
  auto congestion = DetectOnly("congestion", b.input());
  ASSERT_EQ(congestion.size(), 1u);
  EXPECT_EQ(congestion[0].subject, "gpu-d04:mlx5_2/1");
  EXPECT_DOUBLE_EQ(*congestion[0].value, 1e7);
}

// congestion and port_errors read the same windows (a 4096-node night:
// 32,768 of them): built once per analysis, the second call gets the first
// call's windows.
TEST(PortWindows, BuiltOncePerAnalysis) {
  InputBuilder b;
  CleanRun(b);
  InputIndex index(b.Build());
  const std::vector<PortWindow>& first = JudgedPortWindows(index);
  ASSERT_EQ(first.size(), 8u);  // 2 nodes x 4 HCAs, port 1
  EXPECT_EQ(first[0].port.Subject(), "node01:mlx5_0/1");
  EXPECT_EQ(first[0].counters.size(), 5u);
  EXPECT_EQ(&JudgedPortWindows(index), &first);
}

}  // namespace
}  // namespace fabtrack::analyzer
