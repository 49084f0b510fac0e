#include "analyzer/report/html_report.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "analyzer/locate/locate.h"
#include "analyzer/problems.h"
#include "analyzer/report/svg_chart.h"
#include "analyzer/run_facts.h"
#include "analyzer/topology/rail_check.h"
#include "core/node_topology_json.h"
#include "core/statistics.h"

namespace fabtrack::analyzer {
namespace {

// Colours: tonight, history, markers; severities.
constexpr const char* kTonight = "#d62728";
constexpr const char* kMedian = "#1f77b4";
constexpr const char* kBand = "#1f77b4";
constexpr const char* kP99 = "#ff7f0e";
// The trend's medium-message busbw beside the large band's (kMedian).
constexpr const char* kMediumBusbw = "#2ca02c";
// The training step: compute, the communication the GPUs wait on, the ideal.
constexpr const char* kCompute = "#2ca02c";
constexpr const char* kExposed = "#d62728";
constexpr const char* kIdeal = "#7f7f7f";
constexpr size_t kMaxCharts = 12;  // a 1024-node cluster has ~11 node counts
constexpr size_t kMaxRows = 60;    // findings, training and ports tables
constexpr int64_t kLargeBand = int64_t{64} << 20;

const char* kStyle = R"(
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#222;max-width:1240px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ddd}
.sub{color:#666;margin-bottom:12px}.badge{display:inline-block;padding:2px 9px;border-radius:10px;color:#fff;font-weight:600;margin-right:6px}
.critical{background:#c0392b}.warning{background:#e08e0b}.info{background:#2e86c1}.ok{background:#27ae60}
table{border-collapse:collapse;width:100%;font-size:13px}th,td{border-bottom:1px solid #eee;padding:4px 6px;text-align:left;vertical-align:top}
th{background:#f6f6f6}td.num{text-align:right;font-variant-numeric:tabular-nums}.bad{color:#c0392b;font-weight:600}
details pre{white-space:pre-wrap;font-size:11px;background:#fafafa;padding:6px;margin:4px 0}
.charts{display:flex;flex-wrap:wrap;gap:12px}.chart{background:#fff;border:1px solid #e4e4e4}
.chart text{font-size:10px;fill:#444}.chart .ct{font-size:12px;font-weight:600;fill:#222}
.chart .grid{stroke:#eee}.chart .frame{stroke:#999}.chart .band{opacity:.22}
.chart .marker{stroke:#8e44ad;stroke-width:2;stroke-dasharray:4,3}.chart .mlabel{fill:#8e44ad;font-size:10px}
.more{color:#666;font-style:italic}
.verdict{font-size:18px;font-weight:600;color:#fff;padding:10px 14px;border-radius:6px;margin:0 0 14px}
.all-findings{margin-top:10px}.all-findings summary{cursor:pointer;color:#444}
@media print{body{max-width:none;margin:8mm}details{display:block}.chart{break-inside:avoid}})";

std::string E(const std::string& s) { return EscapeXml(s); }

// A finding's value or baseline: counts without decimals.
std::string OptNum(const std::optional<double>& v) { return v ? FormatMeasure(*v) : "–"; }

// Large-message band busbw of one run (sizes >= 64 MiB, else its largest).
std::optional<double> LargeBusbw(const InputIndex& input, int64_t run_id) {
  auto results = input.Results(run_id);
  if (results.empty()) return std::nullopt;
  return BandMedian(results, std::min(kLargeBand, results.back().size_bytes), INT64_MAX,
                    &ResultPoint::busbw_gbps);
}

// Medium-message band busbw of one run: the sizes between the latency band
// and the large band, both exclusive (midsize_busbw_regression's default
// band, 64 KiB < size < 64 MiB); nullopt when the run measured none there
// (no stand-in: the neighbouring bands' sizes are theirs).
std::optional<double> MediumBusbw(const InputIndex& input, int64_t run_id) {
  return BandMedian(input.Results(run_id), kLatencyHeadlineMaxBytes + 1, kBusbwHeadlineMinBytes - 1,
                    &ResultPoint::busbw_gbps);
}

struct ChangePoint {
  double at = 0;
  std::string label;
};

// The run at a regression finding's change point (its evidence), if any.
const RunView* ChangePointRun(const InputIndex& input, const Finding& f) {
  auto cp = f.evidence.find("change_point");
  if (cp == f.evidence.end() || !cp->is_object() || !cp->contains("run_id") ||
      !(*cp)["run_id"].is_number_integer()) {
    return nullptr;
  }
  return input.Run((*cp)["run_id"].get<int64_t>());
}

// Change points of each series from the regression findings' evidence.
std::map<std::string, std::vector<ChangePoint>> ChangePoints(const InputIndex& input,
                                                             const AnalysisResult& result) {
  std::map<std::string, std::vector<ChangePoint>> out;
  for (const Finding& f : result.findings) {
    // The marker names the band whose change it is: the trend draws the
    // large and the medium band on one chart.
    const char* band = f.kind == "busbw_regression"           ? "large"
                       : f.kind == "midsize_busbw_regression" ? "medium"
                       : f.kind == "latency_regression"       ? "latency"
                                                              : nullptr;
    if (band == nullptr) continue;
    const RunView* run = ChangePointRun(input, f);
    if (run == nullptr) continue;
    ChangePoint cp{run->started_at,
                   std::string(band) + " change " + run->started_at_iso.substr(5, 5)};
    // Findings of one band and series may share a change point: one marker.
    std::vector<ChangePoint>& marks = out[f.subject];
    if (std::none_of(marks.begin(), marks.end(),
                     [&](const ChangePoint& m) { return m.at == cp.at && m.label == cp.label; })) {
      marks.push_back(std::move(cp));
    }
  }
  return out;
}

void Header(std::ostringstream& h, const InputIndex& input, const AnalysisResult& result) {
  int counts[3] = {0, 0, 0};
  for (const Finding& f : result.findings) ++counts[static_cast<int>(f.severity)];
  std::string first, last;
  for (const RunView* r : input.judged()) {
    if (first.empty()) first = r->started_at_iso;
    last = r->started_at_iso;
  }
  // One line first: is tonight good, and if not, the top problem.
  const int verdict_status = ExitStatusOf(result);
  h << "<p class=\"verdict "
    << (verdict_status == 2   ? "critical"
        : verdict_status == 1 ? "warning"
                              : "ok")
    << "\">" << E(VerdictLine(result.problems)) << "</p>";
  h << "<h1>fabtrack report: " << E(result.cluster) << "</h1><div class=\"sub\">"
    << result.judged_runs << " run(s) judged";
  if (!first.empty()) h << " from " << E(first) << " to " << E(last);
  h << " against " << input.runs().size() - input.judged().size()
    << " earlier run(s); detectors: " << result.detectors_run.size() << "</div><div>";
  const int status = ExitStatusOf(result);
  if (counts[2]) h << "<span class=\"badge critical\">" << counts[2] << " critical</span>";
  if (counts[1]) h << "<span class=\"badge warning\">" << counts[1] << " warning</span>";
  if (counts[0]) h << "<span class=\"badge info\">" << counts[0] << " info</span>";
  if (status == 0) h << "<span class=\"badge ok\">OK</span>";
  h << " exit status " << status
    << (status == 2   ? " (critical)"
        : status == 1 ? " (warning)"
                      : " (nothing at warning or above)")
    << "</div>";
}

// Problems in plain words: what, where, since when, the latest evidence.
void Problems(std::ostringstream& h, const AnalysisResult& result) {
  h << "<h2>Problems</h2>";
  if (result.problems.empty()) {
    h << "<p>No problem.</p>";
    return;
  }
  h << "<table class=\"problems\"><tr><th>severity</th><th>state</th><th>what</th><th>where</th>"
       "<th>since</th><th>nights</th><th>latest evidence</th></tr>";
  for (const Problem& p : result.problems) {
    const char* sev = SeverityName(p.severity);
    std::string where = p.subject;
    if (p.latest.host) {
      where = *p.latest.host;
      if (p.latest.device) where += " " + *p.latest.device;
      if (p.latest.port) where += " port " + std::to_string(*p.latest.port);
    }
    h << "<tr class=\"problem\"><td><span class=\"badge " << sev << "\">" << sev
      << "</span></td><td>" << ProblemStateName(p.state) << "</td><td>" << E(p.kind)
      << "<br><small>" << E(p.subject) << "</small></td><td>" << E(where) << "</td><td>"
      << E(p.first_seen.substr(0, 10)) << "</td><td class=\"num\">" << p.nights << "</td><td>"
      << E(p.latest.message);
    if (p.latest.run_id) {
      h << "<br><small>run " << *p.latest.run_id << ", " << E(p.latest.run_started_at.value_or(""))
        << "</small>";
    }
    for (const Finding& r : p.related) {
      h << "<br><small>same cause: " << E(r.kind) << ": " << E(r.message) << "</small>";
    }
    if (p.ack) {
      h << "<br><small>acknowledged until " << E(p.ack->until) << ": " << E(p.ack->note)
        << "</small>";
    }
    h << "</td></tr>";
  }
  h << "</table>";
}

void Findings(std::ostringstream& h, const AnalysisResult& result) {
  if (result.findings.empty()) return;
  // The rows behind the problems, one per run and subject: there when asked.
  h << "<details class=\"all-findings\"><summary>All " << result.findings.size()
    << " findings</summary>";
  h << "<table class=\"findings\"><tr><th>severity</th><th>kind</th><th>subject</th><th>what</th>"
       "<th>value</th><th>baseline</th></tr>";
  size_t shown = 0;
  for (const Finding& f : result.findings) {
    if (shown++ == kMaxRows) break;
    const char* sev = SeverityName(f.severity);
    h << "<tr class=\"finding\"><td><span class=\"badge " << sev << "\">" << sev
      << "</span></td><td>" << E(f.kind) << "</td><td>" << E(f.subject) << "</td><td>"
      << E(f.message);
    if (f.run_id) {
      h << "<br><small>run " << *f.run_id << ", " << E(f.run_started_at.value_or("")) << "</small>";
    } else if (f.run_started_at) {  // a window between snapshots, seen when it ended
      h << "<br><small>" << E(*f.run_started_at) << "</small>";
    }
    h << "<details><summary>evidence</summary><pre>"
      << E(f.evidence.dump(1, ' ', false, nlohmann::json::error_handler_t::replace))
      << "</pre></details></td><td class=\"num\">" << OptNum(f.value) << " "
      << E(f.unit.value_or("")) << "</td><td class=\"num\">" << OptNum(f.baseline) << "</td></tr>";
  }
  h << "</table>";
  if (result.findings.size() > kMaxRows) {
    h << "<p class=\"more\">" << result.findings.size() - kMaxRows << " more in --format json</p>";
  }
  h << "</details>";
}

// The newest `fabtrack locate` verdicts (stored with --cluster): when, over
// how many nodes, how many rounds and seconds, and what they convicted in
// plain words; the runs each was run for.
void LocateVerdicts(std::ostringstream& h, const InputIndex& input) {
  const std::vector<LocateView>& verdicts = input.input().locate_verdicts;
  if (verdicts.empty()) return;
  h << "<h2 id=\"locate\">Locate: which node or link is slow</h2><table class=\"findings\">"
       "<tr><th>located</th><th>nodes</th><th>rounds</th><th>seconds</th><th>verdict</th>"
       "<th>runs</th></tr>";
  for (size_t i = 0; i < verdicts.size() && i < kMaxRows; ++i) {
    const LocateRecord& r = verdicts[i].record;
    const bool faulted = !r.verdict.suspects.empty();
    const char* sev = r.exit_status >= 2 ? "critical" : faulted ? "warning" : "info";
    h << "<tr class=\"locate\"><td>"
      << E(IsoFromSeconds(verdicts[i].located_at, IsoStyle::kSeconds)) << "</td><td class=\"num\">"
      << r.hosts.size() << "</td><td class=\"num\">" << r.verdict.rounds
      << "</td><td class=\"num\">" << FormatFixed(r.seconds, 1) << "</td><td><span class=\"badge "
      << sev << "\">" << (faulted ? "suspect" : "clear") << "</span> "
      << E(DescribeLocateVerdict(r.verdict, r.budget_spent));
    if (faulted) {
      h << "<details><summary>evidence</summary><ul>";
      for (const LocateSuspect& s : r.verdict.suspects) {
        for (const std::string& e : s.evidence) h << "<li>" << E(s.name) << ": " << E(e) << "</li>";
      }
      h << "</ul></details>";
    }
    h << "</td><td>";
    for (size_t j = 0; j < r.run_ids.size(); ++j) h << (j ? ", " : "") << r.run_ids[j];
    if (r.sweep_id) h << (r.run_ids.empty() ? "" : "<br>") << "sweep " << E(*r.sweep_id);
    h << "</td></tr>";
  }
  h << "</table>";
}

// One wiring's GPU -> NIC table: path and GPUDirect RDMA per GPU; with
// `usual`, only the GPUs wired otherwise, each beside the usual rail.
void RailRows(std::ostringstream& h, const NodeTopology& t, const NodeTopology* usual) {
  auto rail = [](const NodeTopology& of, const TopoGpu& g) {
    std::string r = g.nic.empty() ? "no NIC" : g.nic + " " + (g.path ? TopoPathName(*g.path) : "?");
    const std::optional<bool> gdr = PairGdr(of, g);
    if (gdr) r += *gdr ? ", GDR" : ", no GDR";
    return r;
  };
  h << "<table class=\"findings\"><tr><th>GPU</th><th>bus id</th><th>NUMA</th><th>rail (NIC, path, "
       "GPUDirect RDMA)</th>"
    << (usual ? "<th>most nodes</th>" : "") << "</tr>";
  for (const TopoGpu& g : t.gpus) {
    std::string theirs;
    if (usual) {
      auto it = std::find_if(usual->gpus.begin(), usual->gpus.end(),
                             [&](const TopoGpu& u) { return u.name == g.name; });
      theirs = it == usual->gpus.end() ? "(no such GPU)" : rail(*usual, *it);
      if (theirs == rail(t, g)) continue;
    }
    const bool far = g.nic.empty() || (g.path && *g.path >= TopoPath::kPhb);
    h << "<tr><td>" << E(g.name) << "</td><td>" << E(g.bus_id) << "</td><td class=\"num\">"
      << (g.numa_node ? std::to_string(*g.numa_node) : "–") << "</td><td"
      << (far ? " class=\"bad\"" : "") << ">" << E(rail(t, g)) << "</td>";
    if (usual) h << "<td>" << E(theirs) << "</td>";
    h << "</tr>";
  }
  h << "</table>";
}

// The rail map: the GPU/NIC wiring `fabtrack topology ingest` stored for the
// cluster's hosts, grouped by wiring so that a 4096-node fleet is one table:
// the wiring most hosts share in full, then each other wiring with its hosts,
// only the GPUs it wires otherwise, and what the rail check says of it.
void RailMap(std::ostringstream& h, const InputIndex& input) {
  const std::map<std::string, NodeTopology>& fleet = input.input().fleet_topologies;
  if (fleet.empty()) return;
  struct Wiring {
    const NodeTopology* topology = nullptr;
    std::vector<std::string> hosts;
  };
  std::map<std::string, Wiring> by_fingerprint;
  for (const auto& [host, topology] : fleet) {
    Wiring& w = by_fingerprint[TopologyFingerprint(topology)];
    w.topology = &topology;
    w.hosts.push_back(host);
  }
  std::vector<const Wiring*> wirings;
  for (const auto& [fingerprint, w] : by_fingerprint) wirings.push_back(&w);
  std::stable_sort(wirings.begin(), wirings.end(), [](const Wiring* a, const Wiring* b) {
    return a->hosts.size() > b->hosts.size();
  });
  auto checks = [&](const NodeTopology& t) {
    for (const TopologyFinding& f : CheckRails(t)) {
      h << "<p><span class=\"badge " << SeverityName(f.severity) << "\">" << E(f.kind) << "</span>"
        << E(f.message) << "</p>";
    }
  };
  auto host_list = [&](const std::vector<std::string>& hosts) {
    std::string out;
    for (size_t i = 0; i < hosts.size() && i < 20; ++i) out += (i ? ", " : "") + hosts[i];
    if (hosts.size() > 20) out += " and " + std::to_string(hosts.size() - 20) + " more";
    return out;
  };
  const Wiring& usual = *wirings.front();
  h << "<h2 id=\"rails\">Rail map: GPU to NIC wiring of " << fleet.size() << " node(s)</h2>"
    << "<p class=\"sub\">" << usual.hosts.size() << " of " << fleet.size()
    << " node(s) wired like this (" << E(host_list(usual.hosts)) << "); " << wirings.size() - 1
    << " other wiring(s) below</p>";
  RailRows(h, *usual.topology, nullptr);
  checks(*usual.topology);
  for (size_t i = 1; i < wirings.size() && i <= kMaxCharts; ++i) {
    h << "<h3>" << wirings[i]->hosts.size()
      << " node(s) wired otherwise: " << E(host_list(wirings[i]->hosts)) << "</h3>";
    RailRows(h, *wirings[i]->topology, usual.topology);
    checks(*wirings[i]->topology);
  }
  if (wirings.size() > kMaxCharts + 1) {
    h << "<p class=\"more\">" << wirings.size() - kMaxCharts - 1
      << " more wirings: fabtrack topology ingest prints the fleet diff</p>";
  }
}

// The runs of a series, or none: a window can hold runs that have no series
// (failed ones), and a report must render any window.
const std::vector<const RunView*>& SeriesRuns(const InputIndex& input, const std::string& name) {
  static const std::vector<const RunView*> kNone;
  auto it = input.series().find(name);
  return it == input.series().end() ? kNone : it->second;
}

// Judged runs that failed or stopped before their last size, so that the
// page says so even when no detector ran on them.
void UnfinishedRuns(std::ostringstream& h, const InputIndex& input) {
  std::vector<const RunView*> runs;
  for (const RunView* r : input.judged()) {
    if (r->status != "complete") runs.push_back(r);
  }
  if (runs.empty()) return;
  h << "<h2>Runs that failed or stopped early</h2><table class=\"findings\"><tr><th>run</th>"
       "<th>started</th><th>series</th><th>status</th></tr>";
  for (size_t i = 0; i < runs.size() && i < kMaxRows; ++i) {
    const RunView& r = *runs[i];
    h << "<tr><td>run " << r.id << "</td><td>" << E(r.started_at_iso) << "</td><td>"
      << E(SeriesName(r)) << "</td><td class=\"bad\">" << E(r.status) << "</td></tr>";
  }
  h << "</table>";
  if (runs.size() > kMaxRows) h << "<p class=\"more\">" << runs.size() - kMaxRows << " more</p>";
}

// Newest judged run of each benchmark series, in series order. Step-mode
// runs have no per-size results: the training section shows them.
std::vector<const RunView*> NewestJudged(const InputIndex& input) {
  std::map<std::string, const RunView*> newest;
  for (const RunView* r : input.judged()) {
    // A failed run has no series (its numbers are unusable): it is listed in
    // the failed-runs table and its findings, never charted.
    if (!input.Step(r->id) && input.series().contains(SeriesName(*r))) {
      newest[SeriesName(*r)] = r;
    }
  }
  std::vector<const RunView*> out;
  for (const auto& [name, r] : newest) out.push_back(r);
  std::sort(out.begin(), out.end(), [](const RunView* a, const RunView* b) {
    return std::make_pair(ScalingFamilyName(*a), a->nodes.value_or(0)) <
           std::make_pair(ScalingFamilyName(*b), b->nodes.value_or(0));
  });
  return out;
}

// A section with nothing to draw says why instead of leaving a heading over
// an empty box (a night of log-only runs, a single node count).
void NoChart(std::ostringstream& h, size_t drawn, const char* why) {
  if (drawn == 0) h << "<p class=\"more no-chart\">" << why << "</p>";
}

constexpr const char* kNoMeasurements =
    "No chart: tonight's judged runs carry no measurements (NCCL logs without a result table, "
    "or runs that failed before their first size).";

LineChart Chart(std::string title, std::string x_label, std::string y_label) {
  LineChart c;
  c.title = std::move(title);
  c.x_label = std::move(x_label);
  c.y_label = std::move(y_label);
  return c;
}

// One run's chart over message sizes (log2 axis, sizes in bytes).
LineChart MessageSizeChart(const RunView& run, std::string y_label) {
  LineChart c = Chart(SeriesName(run), "message size", std::move(y_label));
  c.log2_x = true;
  c.x_is_bytes = true;
  return c;
}

void BusbwCurves(std::ostringstream& h, const InputIndex& input,
                 const std::vector<const RunView*>& tonight) {
  h << "<h2>Bus bandwidth by message size: tonight against the history</h2><div class=\"charts\">";
  size_t charts = 0;
  for (const RunView* run : tonight) {
    if (charts++ == kMaxCharts) break;
    LineChart c = MessageSizeChart(*run, "busbw (GB/s)");
    ChartSeries now{"tonight (run " + std::to_string(run->id) + ")", kTonight, {}, false};
    for (const ResultPoint& p : input.Results(run->id)) {
      if (p.busbw_gbps && p.size_bytes > 0)
        now.points.push_back({double(p.size_bytes), *p.busbw_gbps});
    }
    if (now.points.empty()) {
      --charts;
      continue;
    }
    // History: every earlier run of the series, per size.
    std::map<int64_t, std::vector<double>> by_size;
    for (const RunView* earlier : SeriesRuns(input, SeriesName(*run))) {
      if (earlier->started_at >= run->started_at) break;
      for (const ResultPoint& p : input.Results(earlier->id)) {
        if (p.busbw_gbps && p.size_bytes > 0) by_size[p.size_bytes].push_back(*p.busbw_gbps);
      }
    }
    ChartBand band{"history p10–p90", kBand, {}, {}, {}};
    ChartSeries median{"history median", kMedian, {}, true};
    for (auto& [size, values] : by_size) {
      band.x.push_back(double(size));
      band.lower.push_back(*stats::Quantile(values, 0.1));
      band.upper.push_back(*stats::Quantile(values, 0.9));
      median.points.push_back({double(size), *stats::Median(values)});
    }
    c.series.push_back(std::move(now));
    if (!median.points.empty()) {
      c.series.push_back(std::move(median));
      c.bands.push_back(std::move(band));
    }
    h << RenderSvg(c);
  }
  h << "</div>";
  NoChart(h, charts, kNoMeasurements);
}

// Per series judged tonight, its busbw night by night in the large band
// (>= 64 MiB: busbw_regression's) and the medium band (64 KiB .. 64 MiB:
// midsize_busbw_regression's), each its own line, with the regressions'
// change points marked and labelled by band.
void Trends(std::ostringstream& h, const InputIndex& input,
            const std::vector<const RunView*>& tonight,
            const std::map<std::string, std::vector<ChangePoint>>& change_points) {
  h << "<h2>Trend: busbw per night, large (≥ 64 MiB) and medium (64 KiB – 64 MiB) messages, "
       "change points marked</h2>"
       "<div class=\"charts\">";
  constexpr size_t kMaxNights = 400;
  size_t charts = 0;
  for (const RunView* run : tonight) {
    if (charts++ == kMaxCharts) break;
    const std::string name = SeriesName(*run);
    LineChart c = Chart(name, "night (UTC)", "busbw (GB/s)");
    c.x_is_time = true;
    ChartSeries large{"large messages", kMedian, {}, false};
    ChartSeries medium{"medium messages", kMediumBusbw, {}, false};
    for (const RunView* r : SeriesRuns(input, name)) {
      if (auto v = LargeBusbw(input, r->id)) large.points.push_back({r->started_at, *v});
      if (auto v = MediumBusbw(input, r->id)) medium.points.push_back({r->started_at, *v});
    }
    if (large.points.empty() && medium.points.empty()) {
      --charts;
      continue;
    }
    for (ChartSeries* s : {&large, &medium}) {
      if (s->points.size() > kMaxNights) {
        s->points.erase(s->points.begin(), s->points.end() - kMaxNights);
      }
      if (!s->points.empty()) c.series.push_back(std::move(*s));
    }
    if (auto it = change_points.find(name); it != change_points.end()) {
      for (const ChangePoint& cp : it->second) c.markers.push_back({cp.at, cp.label});
    }
    h << RenderSvg(c);
  }
  h << "</div>";
  NoChart(h, charts, kNoMeasurements);
}

void Scaling(std::ostringstream& h, const InputIndex& input,
             const std::vector<const RunView*>& tonight) {
  // Tonight's efficiency per scaling family, against the median of earlier
  // nights' efficiencies at each node count.
  std::map<std::string, std::map<int, double>> busbw_tonight;
  for (const RunView* r : tonight) {
    if (!r->nodes || *r->nodes < 2) continue;
    if (auto v = LargeBusbw(input, r->id)) busbw_tonight[ScalingFamilyName(*r)][*r->nodes] = *v;
  }
  h << "<h2>Scaling efficiency E(N) = busbw(N) / busbw(N<sub>ref</sub>)</h2><div class=\"charts\">";
  size_t drawn = 0;
  for (const auto& [family, by_nodes] : busbw_tonight) {
    if (by_nodes.size() < 2) continue;
    ++drawn;
    const double ref = by_nodes.begin()->second;
    LineChart c = Chart(family, "nodes", "efficiency");
    c.log2_x = true;
    ChartSeries s{"tonight", kTonight, {}, false};
    for (auto [n, v] : by_nodes) s.points.push_back({double(n), ref > 0 ? v / ref : 0});
    // History: per night, the same ratio.
    std::map<int64_t, std::map<int, double>> nights;
    for (const RunView& r : input.runs()) {
      if (input.Judged(r) || !r.nodes || *r.nodes < 2 || ScalingFamilyName(r) != family) continue;
      if (auto v = LargeBusbw(input, r.id)) nights[NightOf(r.started_at)][*r.nodes] = *v;
    }
    std::map<int, std::vector<double>> eff;
    for (auto& [night, m] : nights) {
      if (m.size() < 2 || m.begin()->second <= 0) continue;
      for (auto [n, v] : m) eff[n].push_back(v / m.begin()->second);
    }
    ChartSeries hist{"history median", kMedian, {}, true};
    for (auto& [n, values] : eff) hist.points.push_back({double(n), *stats::Median(values)});
    c.series.push_back(std::move(s));
    if (!hist.points.empty()) c.series.push_back(std::move(hist));
    h << RenderSvg(c);
  }
  h << "</div>";
  NoChart(h, drawn,
          "No chart: tonight measured fewer than two node counts of one family with "
          "large-message busbw.");
}

void Latency(std::ostringstream& h, const InputIndex& input,
             const std::vector<const RunView*>& tonight) {
  h << "<h2>Latency: p50 and p99 per iteration (time where no per-iteration data)</h2>"
       "<div class=\"charts\">";
  size_t charts = 0;
  for (const RunView* run : tonight) {
    if (charts++ == kMaxCharts) break;
    LineChart c = MessageSizeChart(*run, "latency (µs)");
    ChartSeries p50{"p50", kMedian, {}, false}, p99{"p99", kP99, {}, false};
    double cv_sum = 0;
    int cv_n = 0;
    for (const ResultPoint& p : input.Results(run->id)) {
      if (p.size_bytes <= 0 || p.size_bytes > (int64_t{1} << 20)) continue;
      if (auto v = p.lat_p50_us ? p.lat_p50_us : p.time_us)
        p50.points.push_back({double(p.size_bytes), *v});
      if (p.lat_p99_us) p99.points.push_back({double(p.size_bytes), *p.lat_p99_us});
      if (p.lat_cv) {
        cv_sum += *p.lat_cv;
        ++cv_n;
      }
    }
    if (p50.points.empty()) {
      --charts;
      continue;
    }
    if (cv_n) c.title += " (mean CV " + FormatFixed(cv_sum / cv_n, 2) + ")";
    c.series.push_back(std::move(p50));
    if (!p99.points.empty()) c.series.push_back(std::move(p99));
    h << RenderSvg(c);
  }
  h << "</div>";
  NoChart(h, charts, kNoMeasurements);
}

std::string Plural(int n, const char* one) {
  return std::to_string(n) + " " + one + (n == 1 ? "" : "s");
}

// Per judged step series, its step time and exposed communication p50 night
// by night, with step_regression's change points marked: is the network's
// share of the step getting worse, and since when.
void StepTrends(std::ostringstream& h, const InputIndex& input, const AnalysisResult& result,
                const std::map<std::string, std::map<int, const TrainingLine*>>& families) {
  // step_regression subjects are "<family>/<N> node(s)/step|exposed".
  std::map<std::string, std::vector<ChangePoint>> change_points;
  for (const Finding& f : result.findings) {
    if (f.kind != "step_regression") continue;
    const RunView* run = ChangePointRun(input, f);
    const size_t slash = f.subject.rfind('/');
    if (run == nullptr || slash == std::string::npos) continue;
    const std::string metric = f.subject.substr(slash + 1);
    change_points[f.subject.substr(0, slash)].push_back(
        {run->started_at, metric + " change " + run->started_at_iso.substr(5, 5)});
  }
  const auto series = StepSeries(input);
  h << "<h3>Step time per night, change points marked</h3><div class=\"charts\">";
  size_t charts = 0;
  for (const auto& [family, by_nodes] : families) {
    for (const auto& [nodes, line] : by_nodes) {
      auto it = series.find({family, nodes});
      if (it == series.end() || it->second.size() < 2) continue;
      if (charts++ >= kMaxCharts) break;
      const std::string name = StepSeriesName(family, nodes);
      LineChart c = Chart(name, "night (UTC)", "p50 per step (ms)");
      c.x_is_time = true;
      c.width = 720;
      ChartSeries step{"step time", kMedian, {}, false};
      ChartSeries exposed{"exposed communication", kExposed, {}, false};
      for (const RunView* r : it->second) {
        const StepView& v = *input.Step(r->id);
        step.points.push_back({r->started_at, v.step_ms_p50});
        exposed.points.push_back({r->started_at, v.exposed_ms_p50});
      }
      for (ChartSeries* s : {&step, &exposed}) {
        if (s->points.size() > 400) s->points.erase(s->points.begin(), s->points.end() - 400);
      }
      c.series = {std::move(step), std::move(exposed)};
      if (auto cp = change_points.find(name); cp != change_points.end()) {
        for (const ChangePoint& m : cp->second) c.markers.push_back({m.at, m.label});
      }
      h << RenderSvg(c);
    }
  }
  h << "</div>";
}

// What the network costs the simulated training step (AnalysisResult's
// training lines): per step family a chart of the newest step time p50 per
// node count, stacked as compute and exposed communication against the flat
// step that weak scaling would keep, the lost GPU-hours at the largest node
// count, and a row per judged step run with the findings about it. No step
// run judged, no section.
void Training(std::ostringstream& h, const InputIndex& input, const AnalysisResult& result) {
  if (result.training.empty()) return;
  std::map<int64_t, std::vector<const Finding*>> findings_by_run;
  for (const Finding& f : result.findings) {
    if (f.run_id && f.severity >= Severity::kWarning) findings_by_run[*f.run_id].push_back(&f);
  }
  // Newest line per family and node count (the lines are oldest first).
  std::map<std::string, std::map<int, const TrainingLine*>> families;
  for (const TrainingLine& t : result.training) families[t.family][t.nodes] = &t;

  h << "<h2 id=\"training\">Training step: what the network costs</h2><p class=\"sub\">"
       "Simulated data-parallel step (harness step mode): the step time p50 split into compute "
       "and the gradient all-reduce the backward pass did not hide (exposed: the GPUs wait). "
       "Data parallelism scales weakly: on a healthy fabric the step stays flat as nodes are "
       "added.</p>";
  for (const auto& [family, by_nodes] : families) {
    const TrainingLine& widest = *by_nodes.rbegin()->second;
    h << "<p class=\"cost\"><b>" << E(family) << "</b>: on " << Plural(widest.nodes, "node") << " ("
      << widest.gpus << " GPUs) the step takes " << FormatFixed(widest.step_ms_p50, 1) << " ms, "
      << FormatFixed(widest.exposed_ms_p50, 1) << " ms of it exposed communication (GPUs idle "
      << FormatFixed(widest.idle_share_p50 * 100, 1) << "%): <b>"
      << FormatFixed(widest.gpu_hours_per_1000_steps, 3)
      << " GPU-hours lost per 1000 steps</b></p>";
  }
  h << "<div class=\"charts\">";
  size_t charts = 0;
  for (const auto& [family, by_nodes] : families) {
    if (by_nodes.size() < 2) continue;  // one node count: its row says it all
    if (charts++ == kMaxCharts) break;
    // Every family starts so (its heading above says it); the chart is narrower.
    constexpr std::string_view kCollective = "ddp_step/";
    LineChart c =
        Chart(family.starts_with(kCollective) ? family.substr(kCollective.size()) : family, "nodes",
              "step time p50 (ms)");
    c.log2_x = true;
    c.width = 720;
    ChartBand compute{"compute (step − exposed)", kCompute, {}, {}, {}};
    ChartBand exposed{"exposed communication", kExposed, {}, {}, {}};
    ChartSeries step{"step p50", kMedian, {}, false};
    ChartSeries ideal{
        "flat: the step on " + Plural(by_nodes.begin()->first, "node"), kIdeal, {}, true};
    for (const auto& [nodes, t] : by_nodes) {
      const double x = nodes, waiting = std::max(0.0, t->step_ms_p50 - t->exposed_ms_p50);
      compute.x.push_back(x);
      compute.lower.push_back(0);
      compute.upper.push_back(waiting);
      exposed.x.push_back(x);
      exposed.lower.push_back(waiting);
      exposed.upper.push_back(t->step_ms_p50);
      step.points.push_back({x, t->step_ms_p50});
      ideal.points.push_back({x, by_nodes.begin()->second->step_ms_p50});
    }
    c.series = {std::move(step), std::move(ideal)};
    c.bands = {std::move(compute), std::move(exposed)};
    h << RenderSvg(c);
  }
  h << "</div>";
  StepTrends(h, input, result, families);
  h << "<table class=\"training\"><tr><th>step family</th><th>nodes (GPUs)</th>"
       "<th>step p50 (ms)</th><th>compute p50 (ms)</th><th>exposed p50 (ms)</th>"
       "<th>GPUs idle</th><th>GPU-hours lost per 1000 steps</th><th>findings</th></tr>";
  size_t rows = 0;
  for (const TrainingLine& t : result.training) {
    if (rows++ == kMaxRows) break;
    const auto found = findings_by_run.find(t.run_id);
    bool flagged = false;  // the step itself, not another finding about the run
    if (found != findings_by_run.end()) {
      for (const Finding* f : found->second) {
        flagged |= f->kind == "step_time" || f->kind == "step_regression";
      }
    }
    h << "<tr class=\"step\"><td>" << E(t.family) << "<br><small>run " << t.run_id << ", "
      << E(t.run_started_at) << "</small></td><td class=\"num\">" << t.nodes << " (" << t.gpus
      << ")</td><td class=\"num\">" << FormatFixed(t.step_ms_p50, 1) << "</td><td class=\"num\">"
      << FormatFixed(t.compute_ms_p50, 1) << "</td><td class=\"num" << (flagged ? " bad" : "")
      << "\">" << FormatFixed(t.exposed_ms_p50, 1) << "</td><td class=\"num\">"
      << FormatFixed(t.idle_share_p50 * 100, 1) << "%</td><td class=\"num\">"
      << FormatFixed(t.gpu_hours_per_1000_steps, 3) << "</td><td>";
    if (found != findings_by_run.end()) {
      for (const Finding* f : found->second) {
        const char* sev = SeverityName(f->severity);
        h << "<span class=\"badge " << sev << "\">" << sev << "</span>" << E(f->kind) << " ";
      }
    }
    h << "</td></tr>";
  }
  h << "</table>";
  if (result.training.size() > kMaxRows) {
    h << "<p class=\"more\">" << result.training.size() - kMaxRows
      << " more step runs in --format json</p>";
  }
}

void Ports(std::ostringstream& h, const InputIndex& input) {
  static const std::set<std::string> kErrors = {
      "symbol_error",       "link_error_recovery", "link_downed",       "port_rcv_errors",
      "port_xmit_discards", "hw:out_of_sequence",  "hw:packet_seq_err", "hw:local_ack_timeout_err"};
  struct Row {
    std::string state;
    std::optional<double> rate;
    int64_t errors = 0;
    double xmit_wait = 0, cnp = 0, pause = 0;
    bool saturated = false;
  };
  std::map<std::string, Row> rows;
  for (const RunView* run : input.judged()) {
    for (const PortStateView& p : input.PortStates(run->id)) {
      Row& r = rows[p.host + " " + p.device + "/" + std::to_string(p.port)];
      r.state = p.state.value_or("?");
      r.rate = p.rate_gbps;
    }
    for (const PortDeltaView& d : input.PortDeltas(run->id)) {
      Row& r = rows[d.host + " " + d.device + "/" + std::to_string(d.port)];
      r.saturated |= d.saturated;
      if (kErrors.contains(d.counter) && d.delta) r.errors += *d.delta;
      const double rate = d.per_second.value_or(0);
      if (d.counter == "port_xmit_wait") r.xmit_wait = std::max(r.xmit_wait, rate);
      if (d.counter == "hw:np_cnp_sent" || d.counter == "hw:rp_cnp_handled") r.cnp += rate;
      if (d.counter.rfind("ethtool:", 0) == 0 && d.counter.find("pause") != std::string::npos) {
        r.pause += rate;
      }
    }
  }
  h << "<h2>Port health in the judged runs' windows</h2>";
  if (rows.empty()) {
    h << "<p>No port counters were bracketed with these runs.</p>";
    return;
  }
  std::vector<std::pair<std::string, Row>> sorted(rows.begin(), rows.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    auto badness = [](const Row& r) {
      return (r.state != "ACTIVE" && !r.state.empty() ? 1e18 : 0) + double(r.errors) +
             (r.saturated ? 1e9 : 0) + r.xmit_wait / 1e3 + r.cnp + r.pause;
    };
    return badness(a.second) > badness(b.second);
  });
  h << "<table class=\"ports\"><tr><th>host port</th><th>state</th><th>rate (Gb/s)</th>"
       "<th>errors</th><th>xmit_wait/s</th><th>CNP/s</th><th>PFC pause/s</th></tr>";
  for (size_t i = 0; i < sorted.size() && i < kMaxRows; ++i) {
    const auto& [name, r] = sorted[i];
    const bool bad_state = !r.state.empty() && r.state != "ACTIVE";
    h << "<tr><td>" << E(name) << "</td><td" << (bad_state ? " class=\"bad\"" : "") << ">"
      << E(r.state) << "</td><td class=\"num\">" << OptNum(r.rate) << "</td><td class=\"num"
      << (r.errors || r.saturated ? " bad" : "") << "\">" << r.errors
      << (r.saturated ? " (saturated)" : "") << "</td><td class=\"num\">"
      << FormatFixed(r.xmit_wait, 0) << "</td><td class=\"num\">" << FormatFixed(r.cnp, 0)
      << "</td><td class=\"num\">" << FormatFixed(r.pause, 0) << "</td></tr>";
  }
  h << "</table>";
  if (sorted.size() > kMaxRows) {
    h << "<p class=\"more\">" << sorted.size() - kMaxRows << " more ports, all quieter</p>";
  }
}

}  // namespace

std::string RenderHtmlReport(const InputIndex& input, const AnalysisResult& result) {
  std::ostringstream h;
  h << "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>fabtrack: "
    << E(result.cluster) << "</title><style>" << kStyle << "</style></head><body>";
  Header(h, input, result);
  Problems(h, result);
  Findings(h, result);
  LocateVerdicts(h, input);
  UnfinishedRuns(h, input);
  Training(h, input, result);
  const std::vector<const RunView*> tonight = NewestJudged(input);
  BusbwCurves(h, input, tonight);
  Trends(h, input, tonight, ChangePoints(input, result));
  Scaling(h, input, tonight);
  Latency(h, input, tonight);
  Ports(h, input);
  RailMap(h, input);
  h << "<p class=\"sub\">fabtrack analyze --format html; busbw as nccl-tests defines it "
       "(algbw·2(n−1)/n), GB/s = 10<sup>9</sup> bytes/s.</p></body></html>\n";
  return h.str();
}

}  // namespace fabtrack::analyzer
