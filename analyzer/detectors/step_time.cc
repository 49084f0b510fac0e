// step_time (warning; critical from critical_growth): the simulated
// data-parallel training step (harness step mode) costs more as nodes are
// added, or more than it used to. Data parallelism scales weakly: every GPU
// does the same compute per step whatever the node count, so an ideal fabric
// keeps the step time flat from 1 to N nodes; what grows is the gradient
// all-reduce that the backward pass cannot hide ("exposed" communication,
// when the GPUs sit idle).
//
// Within one sweep (sweep id, else one night) of one step family (model,
// gradient type, bucket, compute times, ranks per node): the step time p50 at
// each node count against the smallest count's; flagged at the first node
// count where it grew by more than max_growth while the idle share there is
// at least min_idle_share (growth without idle time is compute noise, not
// the network). Against history: a run's exposed time above the median of
// the same family and node count's earlier runs by min_rise and by z scaled
// MADs. Every finding says what it costs: GPU-hours lost per 1000 steps.
// Oversubscribed runs (more ranks than CPUs on a machine) are not judged:
// their compute loops share CPUs.
#include <algorithm>
#include <map>
#include <vector>

#include "analyzer/detector.h"
#include "analyzer/run_facts.h"
#include "analyzer/stats/robust.h"
#include "core/run_record.h"

namespace fabtrack::analyzer {
namespace {

struct Settings {
  double max_growth, critical_growth, min_idle_share, min_rise, z, min_history, noise_floor;
};

Settings Read(const DetectorSettings& s) {
  return {.max_growth = s["max_growth"],
          .critical_growth = s["critical_growth"],
          .min_idle_share = s["min_idle_share"],
          .min_rise = s["min_rise"],
          .z = s["z"],
          .min_history = s["min_history"],
          .noise_floor = s["noise_floor"]};
}

struct StepRun {
  const RunView* run;
  const StepView* step;
};

std::string CostText(const StepRun& r) {
  return FormatFixed(LostGpuHoursPer1000Steps(r.step->exposed_ms_p50, r.run->ranks.value_or(1)),
                     2) +
         " GPU-hours per 1000 steps on " + std::to_string(r.run->ranks.value_or(1)) + " GPUs";
}

void JudgeScaling(const std::vector<StepRun>& sweep, const std::string& family, const Settings& s,
                  std::vector<Finding>* findings) {
  std::map<int, StepRun> by_nodes;  // the newest run per node count
  for (const StepRun& r : sweep) by_nodes[r.run->nodes.value_or(1)] = r;
  if (by_nodes.size() < 2) return;
  const auto& [ref_nodes, ref] = *by_nodes.begin();
  nlohmann::json curve = nlohmann::json::object(), idle = nlohmann::json::object();
  for (const auto& [n, r] : by_nodes) {
    curve[std::to_string(n)] = r.step->step_ms_p50;
    idle[std::to_string(n)] = r.step->idle_share_p50;
  }
  for (const auto& [n, r] : by_nodes) {
    if (n == ref_nodes || ref.step->step_ms_p50 <= 0) continue;
    const double growth = r.step->step_ms_p50 / ref.step->step_ms_p50 - 1;
    if (growth <= s.max_growth || r.step->idle_share_p50 < s.min_idle_share) continue;
    Finding f =
        FindingForRun(*r.run, family + "/scaling",
                      growth >= s.critical_growth ? Severity::kCritical : Severity::kWarning);
    f.value = r.step->step_ms_p50;
    f.baseline = ref.step->step_ms_p50;
    f.unit = "ms per step (p50)";
    f.message = "training step grows from " + FormatFixed(ref.step->step_ms_p50, 1) + " ms on " +
                std::to_string(ref_nodes) + " node" + (ref_nodes == 1 ? "" : "s") + " to " +
                FormatFixed(r.step->step_ms_p50, 1) + " ms on " + std::to_string(n) + " nodes (+" +
                FormatFixed(growth * 100, 0) + "%, allowed " + FormatFixed(s.max_growth * 100, 0) +
                "%): " + FormatFixed(r.step->exposed_ms_p50, 1) +
                " ms of gradient all-reduce per step are not hidden by the backward pass (GPUs "
                "idle " +
                FormatFixed(r.step->idle_share_p50 * 100, 1) + "%), " + CostText(r) + " (" +
                FormatParams(r.step->model_params) + " " + r.step->grad_dtype + ")";
    f.evidence = {{"step_ms_p50_by_nodes", curve},
                  {"idle_share_by_nodes", idle},
                  {"reference_nodes", ref_nodes},
                  {"exposed_ms_p50", r.step->exposed_ms_p50},
                  {"gpu_hours_per_1000_steps",
                   LostGpuHoursPer1000Steps(r.step->exposed_ms_p50, r.run->ranks.value_or(1))}};
    findings->push_back(std::move(f));
    return;  // the node count where it breaks; larger ones are in the evidence
  }
}

void JudgeHistory(const StepRun& r, const std::vector<StepRun>& earlier, const std::string& family,
                  const Settings& s, std::vector<Finding>* findings) {
  std::vector<double> history;
  for (const StepRun& e : earlier) history.push_back(e.step->exposed_ms_p50);
  auto base = stats::Baseline(history, static_cast<int>(s.min_history), s.noise_floor);
  if (!base) return;
  // A floor in milliseconds too: a step whose communication is all hidden
  // has an exposed time of a few scheduler ticks.
  const double scale = std::max(base->scale, 0.5);
  const double value = r.step->exposed_ms_p50;
  if (value <= base->median * (1 + s.min_rise) || value <= base->median + s.z * scale) return;
  Finding f =
      FindingForRun(*r.run, family + "/" + std::to_string(r.run->nodes.value_or(1)) + " nodes",
                    Severity::kWarning);
  f.value = value;
  f.baseline = base->median;
  f.unit = "ms exposed communication per step (p50)";
  f.message = "exposed gradient all-reduce per step rose to " + FormatFixed(value, 1) +
              " ms from a median of " + FormatFixed(base->median, 1) + " ms over " +
              std::to_string(base->count) + " earlier runs on " +
              std::to_string(r.run->nodes.value_or(1)) + " nodes (step " +
              FormatFixed(r.step->step_ms_p50, 1) + " ms, GPUs idle " +
              FormatFixed(r.step->idle_share_p50 * 100, 1) + "%): " + CostText(r);
  f.evidence = {{"history_median_ms", base->median},
                {"history_scale_ms", base->scale},
                {"history_runs", base->count},
                {"step_ms_p50", r.step->step_ms_p50},
                {"idle_share_p50", r.step->idle_share_p50}};
  findings->push_back(std::move(f));
}

void Detect(const InputIndex& input, const DetectorSettings& settings,
            std::vector<Finding>* findings) {
  const Settings s = Read(settings);
  // family -> runs oldest first
  std::map<std::string, std::vector<StepRun>> families;
  for (const RunView& run : input.runs()) {
    const StepView* step = input.Step(run.id);
    if (!step || run.status != "complete" || run.oversubscribed) continue;
    families[StepFamilyName(run, *step)].push_back({&run, step});
  }
  for (auto& [family, runs] : families) {
    std::stable_sort(runs.begin(), runs.end(), [](const StepRun& a, const StepRun& b) {
      return a.run->started_at < b.run->started_at;
    });
    // Sweeps with a judged run: scaling within each.
    std::map<std::string, std::vector<StepRun>> sweeps;
    for (const StepRun& r : runs) {
      std::string key = r.run->sweep_id ? *r.run->sweep_id
                                        : "night " + std::to_string(NightOf(r.run->started_at));
      sweeps[key].push_back(r);
    }
    for (const auto& [key, sweep] : sweeps) {
      if (std::any_of(sweep.begin(), sweep.end(),
                      [&](const StepRun& r) { return input.Judged(*r.run); })) {
        JudgeScaling(sweep, family, s, findings);
      }
    }
    // Each judged run against the same node count's earlier runs.
    for (size_t i = 0; i < runs.size(); ++i) {
      if (!input.Judged(*runs[i].run)) continue;
      std::vector<StepRun> earlier;
      for (size_t j = 0; j < i; ++j) {
        if (runs[j].run->nodes == runs[i].run->nodes) earlier.push_back(runs[j]);
      }
      JudgeHistory(runs[i], earlier, family, s, findings);
    }
  }
}

const DetectorRegistrar kRegistered({
    .name = "step_time",
    .summary = "the simulated data-parallel training step (harness step mode) grows with the "
               "node count or its exposed communication rose against history; cost in GPU-hours "
               "per 1000 steps (warning)",
    .params =
        {
            {"max_growth", 0.25,
             "flag a step time p50 this much above the sweep's smallest node count's"},
            {"critical_growth", 1.0, "a growth at least this large is critical"},
            {"min_idle_share", 0.05,
             "only when the GPUs wait on the network at least this share of the step"},
            {"min_rise", 0.2,
             "history: flag exposed time this much above the median of earlier runs"},
            {"z", 4, "history: and this many scaled MADs above it"},
            {"min_history", 5, "history: earlier runs of the same family and node count needed"},
            {"noise_floor", 0.05, "history: MAD floor as a share of the median"},
        },
    .detect = Detect,
});

}  // namespace
}  // namespace fabtrack::analyzer
