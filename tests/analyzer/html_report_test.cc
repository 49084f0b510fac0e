// The HTML report: self-contained, escaped, every section drawn from data.
// With FABTRACK_REPORT_OUT set, ScenarioReport and TrainingReport also write
// their page there for html_report_render_test.sh (headless Chromium).
#include "analyzer/report/html_report.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <utility>
#include <vector>

#include "analyzer/report/svg_chart.h"
#include "analyzer/run_facts.h"
#include "tests/analyzer/input_builder.h"
#include "tests/analyzer/scenario.h"

namespace fabtrack::analyzer {
namespace {

using testing::Fault;
using testing::MakeScenario;

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// 35 nights of 1..16 nodes, busbw 15% down at 8 nodes from night 30, port
// errors on one host; the last night judged.
std::string ScenarioHtml() {
  auto s = MakeScenario({.fault = Fault::kBusbwDrop, .magnitude = 0.15, .nights = 34});
  AnalysisInput input = s.input;
  input.judge_from = testing::kFirstNight + 33 * testing::kDay - 3600;
  for (const RunView& r : input.runs) {
    if (r.nodes == 8 && input.Judged(r)) {
      input.port_deltas.push_back({r.id, "node03", "mlx5_2", 1, "symbol_error", 4242, 14.1, false});
      input.port_states.push_back(
          {r.id, r.started_at + 300, "node03", "mlx5_2", 1, "InfiniBand", "ACTIVE", "LinkUp", 200});
    }
  }
  InputIndex index(std::move(input));
  return RenderHtmlReport(index, Analyze(index, AnalyzerConfig{}));
}

TEST(HtmlReport, ScenarioReport) {
  const std::string html = ScenarioHtml();
  if (const char* out = std::getenv("FABTRACK_REPORT_OUT")) std::ofstream(out) << html;
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  // Self-contained: nothing to fetch (the SVG namespace is a name, not a fetch).
  std::string without_ns = std::regex_replace(html, std::regex("xmlns=\"[^\"]*\""), "");
  EXPECT_EQ(without_ns.find("http"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  for (const char* section : {"Problems", "All ", "Bus bandwidth by message size",
                              "Trend:", "Scaling efficiency", "Latency: p50", "Port health"}) {
    EXPECT_NE(html.find(section), std::string::npos) << section;
  }
  EXPECT_NE(html.find("busbw_regression"), std::string::npos);
  // The verdict first, then one row per problem (not per run).
  EXPECT_LT(html.find("class=\"verdict critical\">CRITICAL: "), html.find("<h1>"));
  EXPECT_GE(Count(html, "class=\"problem\""), 2u);
  EXPECT_NE(html.find("port_errors"), std::string::npos);
  EXPECT_NE(html.find("badge warning"), std::string::npos);
  // One busbw curve, one trend and one latency chart per node count, one
  // scaling chart; tonight's line and the history band in the curves.
  EXPECT_GE(Count(html, "<svg"), 3 * 5 + 1u);
  EXPECT_GE(Count(html, "class=\"band\""), 4u);
  EXPECT_NE(html.find("tonight (run"), std::string::npos);
  EXPECT_NE(html.find("node03 mlx5_2/1"), std::string::npos);
  EXPECT_NE(html.find(">4242<"), std::string::npos);
  // No step-mode run judged: no training section.
  EXPECT_EQ(html.find("id=\"training\""), std::string::npos);
  EXPECT_EQ(html.find("Training step"), std::string::npos);
}

// Ten nights of a step-mode sweep over 1..8 nodes (the newest judged) whose
// exposed communication breaks at 4 nodes, beside one nccl-tests series.
std::string TrainingHtml() {
  testing::InputBuilder b;
  for (int night = 0; night < 10; ++night) {
    const bool tonight = night == 9;
    double offset = 0;
    for (int nodes : {1, 2, 4, 8}) {
      const double exposed = tonight && nodes >= 4 ? 50.0 * nodes : 10.0 * nodes;
      b.AddStep(b.AddRun(night, nodes, offset += 60), 300 + exposed, exposed);
    }
    RunView& bench = b.AddRun(night, 2, offset += 60);
    for (int i = 0; i < 28; i += 3) b.AddResult(bench, int64_t{8} << i, 20 + i, 1.0 + i);
  }
  b.JudgeFrom(9);
  InputIndex index(b.Build());
  return RenderHtmlReport(index, Analyze(index, AnalyzerConfig{}));
}

TEST(HtmlReport, TrainingReport) {
  const std::string html = TrainingHtml();
  if (const char* out = std::getenv("FABTRACK_REPORT_OUT")) std::ofstream(out) << html;
  std::string without_ns = std::regex_replace(html, std::regex("xmlns=\"[^\"]*\""), "");
  EXPECT_EQ(without_ns.find("http"), std::string::npos);
  ASSERT_NE(html.find("<h2 id=\"training\">Training step: what the network costs</h2>"),
            std::string::npos);
  // The lost GPU-hours at the largest node count: 400 ms x 1000 x 64 / 3.6e6.
  EXPECT_NE(html.find("on 8 nodes (64 GPUs) the step takes 700.0 ms, 400.0 ms of it exposed "
                      "communication (GPUs idle 57.1%): <b>7.111 GPU-hours lost per 1000 "
                      "steps</b>"),
            std::string::npos);
  // One chart for the step family: compute and exposed stacked under the
  // step line, the flat step of 1 node dashed.
  const size_t chart = html.find("<title>7B bf16/bucket 25 MiB");
  ASSERT_NE(chart, std::string::npos);
  const std::string svg = html.substr(chart, html.find("</svg>", chart) - chart);
  EXPECT_EQ(Count(svg, "class=\"band\""), 2u);
  EXPECT_NE(svg.find("class=\"band\" fill=\"#2ca02c\""), std::string::npos);
  EXPECT_NE(svg.find("<title>compute (step − exposed)</title>"), std::string::npos);
  EXPECT_NE(svg.find("class=\"band\" fill=\"#d62728\""), std::string::npos);
  EXPECT_NE(svg.find("<title>exposed communication</title>"), std::string::npos);
  EXPECT_NE(svg.find("<title>step p50</title>"), std::string::npos);
  EXPECT_NE(svg.find("<title>flat: the step on 1 node</title>"), std::string::npos);
  // A row per judged step run; the one step_time flags (4 nodes, +43%)
  // carries its badge and its exposed time is marked.
  EXPECT_EQ(Count(html, "<tr class=\"step\">"), 4u);
  EXPECT_NE(html.find("<td class=\"num\">4 (32)</td><td class=\"num\">500.0</td><td "
                      "class=\"num\">300.0</td><td class=\"num bad\">200.0</td>"),
            std::string::npos);
  EXPECT_NE(html.find("\">warning</span>step_time"), std::string::npos);
  // A trend chart per judged step series (node count): step time and
  // exposed communication over the ten nights; tonight's 4-node point is
  // the rise.
  EXPECT_NE(html.find("<h3>Step time per night, change points marked</h3>"), std::string::npos);
  const size_t trend = html.find("<title>ddp_step/7B bf16/bucket 25 MiB");
  ASSERT_NE(trend, std::string::npos);
  for (int nodes : {1, 2, 4, 8}) {
    const std::string title =
        "/" + std::to_string(nodes) + (nodes == 1 ? " node" : " nodes") + "</title>";
    const size_t at = html.find(title, trend);
    ASSERT_NE(at, std::string::npos) << title;
    const std::string svg = html.substr(at, html.find("</svg>", at) - at);
    EXPECT_NE(svg.find("<title>step time</title>"), std::string::npos);
    EXPECT_NE(svg.find("<title>exposed communication</title>"), std::string::npos);
  }
  // The benchmark series keeps its charts; the step runs, which have no
  // per-size results, get none: 1 training + 4 step trends + busbw, trend
  // and latency.
  EXPECT_EQ(Count(html, "<svg"), 8u);
  EXPECT_EQ(html.find("no data"), std::string::npos);
}

TEST(HtmlReport, ChangePointIsMarkedOnTheTrend) {
  testing::InputBuilder b;
  for (int night = 0; night < 3; ++night) {
    RunView& r = b.AddRun(night, 2);
    b.AddResult(r, int64_t{1} << 30, 5000, night == 2 ? 150 : 200);
  }
  b.JudgeFrom(2);
  InputIndex index(b.Build());
  AnalysisResult result;
  result.cluster = "c";
  Finding f;
  f.kind = "busbw_regression";
  f.subject = SeriesName(index.runs()[1]);
  f.evidence = {{"change_point", {{"run_id", index.runs()[2].id}, {"p_value", 0.001}}}};
  result.findings.push_back(f);
  const std::string html = RenderHtmlReport(index, result);
  EXPECT_EQ(Count(html, "class=\"marker\""), 1u);
  EXPECT_NE(html.find("change " + index.runs()[2].started_at_iso.substr(5, 5)), std::string::npos);
}

// The trend section's chart: from its heading to the end of its first SVG.
std::string TrendSvg(const std::string& html) {
  const size_t section = html.find("<h2>Trend:");
  if (section == std::string::npos) return "";
  const size_t end = html.find("</svg>", section);
  return end == std::string::npos ? "" : html.substr(section, end - section);
}

// The (x, y) pixels of the line titled `name` in `svg`.
std::vector<std::pair<double, double>> LinePixels(const std::string& svg, const std::string& name) {
  std::vector<std::pair<double, double>> out;
  const std::regex line("<polyline[^>]* points=\"([^\"]*)\"><title>([^<]*)</title>");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), line); it != std::sregex_iterator();
       ++it) {
    if ((*it)[2] != name) continue;
    std::istringstream points((*it)[1].str());
    double x, y;
    char comma;
    while (points >> x >> comma >> y) out.push_back({x, y});
  }
  return out;
}

// Issue 32: the trend draws the medium band (64 KiB < size < 64 MiB,
// midsize_busbw_regression's) beside the large one, each its own line, and
// both bands' change points, labelled by band. The medium line's heights are
// checked against the band medians of the data, on the large line's scale.
TEST(HtmlReport, TrendDrawsTheMediumBandWithItsChangePoints) {
  constexpr int64_t kMiB = int64_t{1} << 20;
  testing::InputBuilder b;
  std::vector<double> medium, large;  // expected, per night
  for (int night = 0; night < 7; ++night) {
    RunView& r = b.AddRun(night, 2);
    const double drop = night >= 4 ? 0.8 : 1.0;  // both bands fall on night 4
    const double gib = 200 * drop - night;
    b.AddResult(r, 8 << 10, 20, 0.5);   // latency band: in neither line
    b.AddResult(r, 64 << 10, 25, 1.5);  // 64 KiB: the latency band's bound, not medium
    if (night == 5) {                   // a run without medium sizes has no medium point
      b.AddResult(r, 1024 * kMiB, 6000, gib);
      large.push_back(gib);
      continue;
    }
    // Three medium sizes whose median is a different size from night to night.
    std::vector<double> mid = {(40 + 7 * night) * drop, (60 - 2 * night) * drop,
                               (55 + night) * drop};
    b.AddResult(r, 1 * kMiB, 30, mid[0]);
    b.AddResult(r, 4 * kMiB, 90, mid[1]);
    b.AddResult(r, 16 * kMiB, 300, mid[2]);
    b.AddResult(r, 64 * kMiB, 900, 190 * drop);  // 64 MiB: the large band's bound, large
    b.AddResult(r, 1024 * kMiB, 6000, gib);
    std::sort(mid.begin(), mid.end());
    medium.push_back(mid[1]);
    large.push_back((190 * drop + gib) / 2);
  }
  b.JudgeFrom(6);
  InputIndex index(b.Build());
  const RunView& changed = index.runs()[4];
  AnalysisResult result;
  result.cluster = "c";
  for (const char* kind : {"busbw_regression", "midsize_busbw_regression"}) {
    Finding f;
    f.kind = kind;
    f.subject = SeriesName(changed);
    f.evidence = {{"change_point", {{"run_id", changed.id}, {"p_value", 0.001}}}};
    result.findings.push_back(f);
    result.findings.push_back(f);  // a second finding at the same change: one marker
  }
  const std::string svg = TrendSvg(RenderHtmlReport(index, result));
  ASSERT_FALSE(svg.empty());

  const auto large_px = LinePixels(svg, "large messages");
  const auto medium_px = LinePixels(svg, "medium messages");
  ASSERT_EQ(large_px.size(), 7u) << svg;
  ASSERT_EQ(medium_px.size(), 6u) << svg;  // night 5 measured no medium size
  // The x axis' baseline: heights above it are proportional to the values.
  std::smatch frame;
  ASSERT_TRUE(
      std::regex_search(svg, frame, std::regex("y1=\"([0-9.]+)\" y2=\"\\1\" class=\"frame\"")));
  const double base = std::stod(frame[1]);
  const double px_per_gbps = (base - large_px[0].second) / large[0];
  for (size_t i = 0; i < large.size(); ++i) {
    EXPECT_NEAR((base - large_px[i].second) / px_per_gbps, large[i], 0.01 * large[i]) << i;
  }
  for (size_t i = 0, night = 0; i < medium.size(); ++i, ++night) {
    if (night == 5) ++night;
    EXPECT_NEAR(medium_px[i].first, large_px[night].first, 0.11) << "night " << night;
    EXPECT_NEAR((base - medium_px[i].second) / px_per_gbps, medium[i], 0.01 * medium[i])
        << "night " << night;
  }
  // A legend entry per line.
  EXPECT_EQ(Count(svg, ">large messages</text>"), 1u);
  EXPECT_EQ(Count(svg, ">medium messages</text>"), 1u);

  // Both bands' change points on night 4: a marker each at that night's x,
  // labelled by band, the labels stacked rather than printed over each other.
  const std::string day = changed.started_at_iso.substr(5, 5);
  EXPECT_EQ(Count(svg, "class=\"marker\""), 2u) << svg;
  std::vector<std::string> label_ys;
  for (const std::string& label : {"large change " + day, "medium change " + day}) {
    std::smatch m;
    ASSERT_TRUE(std::regex_search(
        svg, m,
        std::regex("<text class=\"mlabel\" x=\"([0-9.]+)\" y=\"([0-9.]+)\">" + label + "<")))
        << label << "\n"
        << svg;
    EXPECT_NEAR(std::stod(m[1]) - 3, large_px[4].first, 0.11) << label;
    label_ys.push_back(m[2]);
  }
  EXPECT_NE(label_ys[0], label_ys[1]);
}

// Issue 33 item 4 with two lines: a trend of a single night labels its day
// once.
TEST(HtmlReport, ASingleNightTrendWithBothBandsLabelsItsDayOnce) {
  testing::InputBuilder b;
  RunView& r = b.AddRun(0, 2);
  b.AddResult(r, 1 << 20, 30, 40);
  b.AddResult(r, int64_t{1} << 30, 6000, 200);
  InputIndex index(b.Build());
  const std::string svg = TrendSvg(RenderHtmlReport(index, Analyze(index, AnalyzerConfig{})));
  ASSERT_EQ(LinePixels(svg, "medium messages").size(), 1u) << svg;
  ASSERT_EQ(LinePixels(svg, "large messages").size(), 1u) << svg;
  EXPECT_EQ(Count(svg, ">" + index.runs()[0].started_at_iso.substr(5, 5) + "<"), 1u) << svg;
}

TEST(HtmlReport, StepChangePointIsMarkedOnTheStepTrend) {
  testing::InputBuilder b;
  for (int night = 0; night < 3; ++night) {
    b.AddStep(b.AddRun(night, 2), night == 2 ? 400 : 300, night == 2 ? 120 : 20);
  }
  b.JudgeFrom(2);
  InputIndex index(b.Build());
  AnalysisResult result = Analyze(index, AnalyzerConfig{});
  ASSERT_EQ(result.training.size(), 1u);
  const RunView& changed = index.runs()[2];
  const std::string series = StepSeriesName(result.training[0].family, 2);
  for (const char* metric : {"/step", "/exposed"}) {
    Finding f;
    f.kind = "step_regression";
    f.subject = series + metric;
    f.evidence = {{"change_point", {{"run_id", changed.id}, {"p_value", 0.001}}}};
    result.findings.push_back(f);
  }
  const std::string html = RenderHtmlReport(index, result);
  const size_t at = html.find("<title>" + series + "</title>");
  ASSERT_NE(at, std::string::npos) << series;
  const std::string svg = html.substr(at, html.find("</svg>", at) - at);
  EXPECT_EQ(Count(svg, "class=\"marker\""), 2u);
  const std::string day = changed.started_at_iso.substr(5, 5);
  EXPECT_NE(svg.find("step change " + day), std::string::npos);
  EXPECT_NE(svg.find("exposed change " + day), std::string::npos);
}

// A night of NCCL logs without result tables: no empty chart boxes, a
// sentence per section saying why there is nothing to draw, and the
// problems still first.
TEST(HtmlReport, LogOnlyNightDrawsNoEmptyCharts) {
  testing::InputBuilder b;
  for (int night = 0; night < 5; ++night) {
    RunView& run = b.AddRun(night, 2);
    for (int i = 0; i < 8; ++i) b.AddResult(run, int64_t{8} << (3 * i), 20 + i, 1.0 + i);
  }
  RunView& tonight = b.AddRun(5, 2);
  tonight.source = "nccl-log";
  b.AddLogEvent(tonight, "warn", 12, "node01",
                "transport/net_ib.cc:2146 NCCL WARN NET/IB : Got completion from peer "
                "10.0.0.2<4242> with status=12 opcode=0 len=0 vendor err 129 (Recv) hca mlx5_0");
  b.JudgeFrom(5);
  InputIndex index(b.Build());
  const std::string html = RenderHtmlReport(index, Analyze(index, AnalyzerConfig{}));
  EXPECT_EQ(Count(html, "<svg"), 0u) << "a chart without tonight's data";
  EXPECT_GE(Count(html, "class=\"more no-chart\""), 3u);
  EXPECT_LT(html.find("class=\"verdict"), html.find("no-chart"));
}

TEST(HtmlReport, HostileNamesAreEscaped) {
  testing::InputBuilder b;
  b.input().cluster.name = "<b>c</b>";
  RunView& run = b.AddRun(0, 2);
  run.hosts = {"<script>alert(1)</script>"};
  b.AddResult(run, 1024, 10, 0.1);
  b.AddPortDelta(run, "<script>alert(1)</script>", "mlx5_0", "symbol_error", 99);
  InputIndex index(b.Build());
  AnalysisResult result = Analyze(index, AnalyzerConfig{});
  ASSERT_FALSE(result.findings.empty());
  const std::string html = RenderHtmlReport(index, result);
  EXPECT_EQ(html.find("<script>"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_EQ(html.find("<b>c</b>"), std::string::npos);
}

// Issue 16: a window holding a failed run (no series: failed runs carry no
// usable numbers) and a log-only run (no collective, no results) used to
// throw map::at out of the busbw and trend sections (fabtrack exit 4).
TEST(HtmlReport, WindowWithFailedAndLogOnlyRuns) {
  testing::InputBuilder b;
  for (int night = 0; night < 5; ++night) {
    RunView& run = b.AddRun(night, 2);
    for (int64_t size = 8; size <= (1 << 20); size *= 8) b.AddResult(run, size, 20, 40);
  }
  RunView& failed = b.AddRun(5, 4);  // the only run of its series
  failed.status = "failed";
  b.AddResult(failed, 8, 20, 40);
  RunView& log_only = b.AddRun(5, 2, 60);
  log_only.source = "nccl-log";
  log_only.collective.reset();
  log_only.dtype.reset();
  b.JudgeFrom(5);
  InputIndex index(b.Build());
  std::string html;
  ASSERT_NO_THROW(html = RenderHtmlReport(index, Analyze(index, AnalyzerConfig{})));
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("run " + std::to_string(failed.id)), std::string::npos);
}

// Issue 21 item 6: the rail map. 40 nodes wired rail-optimized (GPUi ->
// mlx5_i, PIX) and one whose GPU3 reaches mlx5_3 across the CPUs (SYS): one
// full table for the 40, one row for the odd node beside the usual rail.
TEST(HtmlReport, RailMapGroupsNodesByWiring) {
  auto rail8 = [](bool odd) {
    NodeTopology t;
    for (int i = 0; i < 8; ++i) {
      TopoGpu g;
      g.name = "GPU" + std::to_string(i);
      g.bus_id = "0000:" + std::to_string(10 + i) + ":00.0";
      g.numa_node = i / 4;
      g.gdr = true;
      g.nic = "mlx5_" + std::to_string(i);
      g.path = odd && i == 3 ? TopoPath::kSys : TopoPath::kPix;
      t.gpus.push_back(g);
      TopoNic n;
      n.name = g.nic;
      n.gdr = true;
      n.speed_mbps = 400000;
      t.nics.push_back(n);
    }
    return t;
  };
  testing::InputBuilder b;
  RunView& run = b.AddRun(0, 2);
  b.AddResult(run, 1024, 10, 0.1);
  for (int i = 1; i <= 40; ++i)
    b.input().fleet_topologies["node" + std::to_string(i)] = rail8(false);
  b.input().fleet_topologies["node41"] = rail8(true);
  InputIndex index(b.Build());
  const std::string html = RenderHtmlReport(index, Analyze(index, AnalyzerConfig{}));
  const size_t map = html.find("Rail map: GPU to NIC wiring of 41 node(s)");
  ASSERT_NE(map, std::string::npos);
  EXPECT_NE(html.find("40 of 41 node(s) wired like this", map), std::string::npos);
  const size_t odd = html.find("1 node(s) wired otherwise: node41", map);
  ASSERT_NE(odd, std::string::npos);
  // The usual table has the eight GPUs; the odd node's only GPU3, beside
  // the usual rail, marked, and the rail check's nic_far finding.
  const std::string usual_table = html.substr(map, odd - map);
  EXPECT_EQ(Count(usual_table, "<td>GPU"), 8u);
  const std::string odd_part = html.substr(odd);
  EXPECT_EQ(Count(odd_part, "<td>GPU"), 1u);
  EXPECT_NE(odd_part.find("<td class=\"bad\">mlx5_3 SYS, GDR</td><td>mlx5_3 PIX, GDR</td>"),
            std::string::npos);
  EXPECT_NE(odd_part.find("nic_far"), std::string::npos);
  // No topology stored: no section.
  testing::InputBuilder bare;
  RunView& r = bare.AddRun(0, 2);
  bare.AddResult(r, 1024, 10, 0.1);
  InputIndex bare_index(bare.Build());
  EXPECT_EQ(RenderHtmlReport(bare_index, Analyze(bare_index, AnalyzerConfig{})).find("Rail map"),
            std::string::npos);
}

TEST(SvgChart, AxesSeriesBandAndMarker) {
  LineChart c;
  c.title = "t";
  c.log2_x = true;
  c.x_is_bytes = true;
  c.series.push_back({"s", "#123456", {{1024, 1}, {1 << 20, 3}}, false});
  c.bands.push_back({"b", "#654321", {1024, 1 << 20}, {0.5, 2}, {1.5, 4}});
  c.markers.push_back({1 << 15, "m"});
  const std::string svg = RenderSvg(c);
  EXPECT_NE(svg.find("stroke=\"#123456\""), std::string::npos);
  EXPECT_NE(svg.find("fill=\"#654321\""), std::string::npos);
  EXPECT_NE(svg.find("1 KiB"), std::string::npos);
  EXPECT_NE(svg.find("1 MiB"), std::string::npos);
  EXPECT_EQ(Count(svg, "class=\"marker\""), 1u);
  EXPECT_NE(RenderSvg(LineChart{.title = "empty"}).find("no data"), std::string::npos);
}

// Issue 33: a trend chart of one night (or of a one-day window) labels its
// day once, not once per fraction of the day; a week labels each day once.
TEST(SvgChart, ATimeAxisLabelsEachDayOnce) {
  const double night = 1795833000;  // 2026-11-28T02:30:00Z
  LineChart one_point;
  one_point.title = "one night";
  one_point.x_is_time = true;
  one_point.series.push_back({"busbw", "#123456", {{night, 10}}, false});
  EXPECT_EQ(Count(RenderSvg(one_point), ">11-28<"), 1u) << RenderSvg(one_point);

  LineChart one_night = one_point;  // runs an hour apart in one night
  one_night.series[0].points = {{night, 10}, {night + 1200, 11}, {night + 3600, 9}};
  EXPECT_EQ(Count(RenderSvg(one_night), ">11-28<"), 1u) << RenderSvg(one_night);

  LineChart week = one_point;
  for (int d = 1; d < 7; ++d) week.series[0].points.push_back({night + d * 86400.0, 10});
  const std::string svg = RenderSvg(week);
  for (const char* day : {">11-28<", ">11-29<", ">11-30<", ">12-01<", ">12-04<"}) {
    EXPECT_EQ(Count(svg, day), 1u) << day << "\n" << svg;
  }
}

}  // namespace
}  // namespace fabtrack::analyzer
