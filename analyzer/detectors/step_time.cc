// step_time (warning; critical from critical_growth): the simulated
// data-parallel training step (harness step mode) costs more as nodes are
// added. Data parallelism scales weakly: every GPU
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
// the network). Every finding says what it costs: GPU-hours lost per 1000
// steps. Night-over-night changes of one node count (step or exposed time
// against its own history) are step_regression's, with change points.
// Oversubscribed runs (more ranks than CPUs on a machine) are not judged:
// their compute loops share CPUs.
#include <algorithm>
#include <map>
#include <vector>

#include "analyzer/detector.h"
#include "analyzer/run_facts.h"
#include "core/run_record.h"

namespace fabtrack::analyzer::step_time_detector {
namespace {

struct Settings {
  double max_growth, critical_growth, min_idle_share;
};

Settings Read(const DetectorSettings& s) {
  return {.max_growth = s["max_growth"],
          .critical_growth = s["critical_growth"],
          .min_idle_share = s["min_idle_share"]};
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
  }
}

const DetectorRegistrar kRegistered({
    .name = "step_time",
    .summary =
        "the simulated data-parallel training step (harness step mode) grows with the "
        "node count while the GPUs wait on exposed communication; cost in GPU-hours per 1000 "
        "steps (warning)",
    .params =
        {
            {"max_growth", 0.25,
             "flag a step time p50 this much above the sweep's smallest node count's"},
            {"critical_growth", 1.0, "a growth at least this large is critical"},
            {"min_idle_share", 0.05,
             "only when the GPUs wait on the network at least this share of the step"},
        },
    .detect = Detect,
});

}  // namespace
}  // namespace fabtrack::analyzer::step_time_detector
