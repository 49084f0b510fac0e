// step_regression (warning; critical from critical_magnitude; info for
// improvements): the simulated training step (harness step mode) of one step
// series got slower night over night, or its exposed communication rose,
// tonight against the recent baseline (median/MAD) or since an E-divisive
// change point that still holds; what changed at the change point. The
// tests are busbw_regression's (analyzer/series_regression.h), on one number
// per run, with its own settings.
//
// A step series is a step family (StepFamilyName: model, gradient type,
// bucket, compute times, ranks per node, backend) at one node count. Each
// gets two series, each with its own open finding:
//  - "step": the step time p50, what the user pays, network or not;
//  - "exposed": the exposed communication p50, the part of the step the
//    network costs (a slower step with flat exposed time is compute).
// An exposed time can be a few milliseconds of scheduler noise when the
// backward pass hides the all-reduce: doubling it costs nothing. So its
// changes count against the step: smaller than min_step_share of the step
// time they are not reported, and critical_magnitude is the rise as a share
// of the step time (what the step loses), not of the exposed time itself.
// As in step_time, only complete runs that were not oversubscribed (compute
// loops sharing CPUs) count.
#include <algorithm>
#include <cmath>
#include <map>
#include <utility>
#include <vector>

#include "analyzer/detector.h"
#include "analyzer/run_facts.h"
#include "analyzer/series_regression.h"
#include "core/run_record.h"

namespace fabtrack::analyzer::step_regression_detector {
namespace {

enum class Metric { kStep, kExposed };

SeriesRegressionSpec SpecFor(Metric metric) {
  SeriesRegressionSpec s;
  s.first_night_magnitude = 0;  // confirmed first: see series_regression.h
  s.kind = "step_regression";
  s.metric_label = metric == Metric::kStep ? "step time p50" : "exposed communication p50";
  s.metric_field = metric == Metric::kStep ? "step_ms_p50" : "exposed_ms_p50";
  s.unit = "ms";
  s.higher_is_better = false;
  return s;
}

const SeriesRegressionSpec& Spec(Metric metric) {
  static const SeriesRegressionSpec step = SpecFor(Metric::kStep);
  static const SeriesRegressionSpec exposed = SpecFor(Metric::kExposed);
  return metric == Metric::kStep ? step : exposed;
}

std::vector<Param> Params() {
  std::vector<Param> params = SeriesRegressionParams(Spec(Metric::kStep));
  for (Param& p : params) {
    if (p.key == "critical_magnitude") {
      p.help += " (exposed communication: its rise as a share of the step time)";
    }
  }
  params.push_back({"min_step_share", 0.02,
                    "exposed communication: a change smaller than this share of the step time "
                    "is not reported"});
  return params;
}

std::string Signed(double v, int digits) { return (v >= 0 ? "+" : "") + FormatFixed(v, digits); }

// The engine's finding in the step's terms: what the GPUs lose, and for the
// exposed series the change as a share of the step. false: not worth a
// finding (an exposed change too small for the step to notice).
bool AddStepCost(Metric metric, const StepView& step, const RunView& run,
                 const DetectorSettings& settings, Finding* f) {
  const int gpus = run.ranks.value_or(1);
  const double lost = LostGpuHoursPer1000Steps(step.exposed_ms_p50, gpus);
  f->evidence["step_ms_p50"] = step.step_ms_p50;
  f->evidence["compute_ms_p50"] = step.compute_ms_p50;
  f->evidence["exposed_ms_p50"] = step.exposed_ms_p50;
  f->evidence["idle_share_p50"] = step.idle_share_p50;
  f->evidence["gpu_hours_per_1000_steps"] = lost;
  if (metric == Metric::kStep) {
    f->unit = "ms per step (p50)";
    f->message += "; exposed communication now " + FormatFixed(step.exposed_ms_p50, 1) +
                  " ms per step (GPUs idle " + FormatFixed(step.idle_share_p50 * 100, 1) +
                  "%): " + FormatFixed(lost, 2) + " GPU-hours lost per 1000 steps on " +
                  std::to_string(gpus) + " GPUs";
    return true;
  }
  f->unit = "ms exposed communication per step (p50)";
  // The step the baseline's exposed time belonged to: the change is what the
  // step gained or lost against it.
  const double delta_ms = f->value.value_or(0) - f->baseline.value_or(0);
  const double step_before = step.step_ms_p50 - delta_ms;
  const double share = step_before > 0 ? delta_ms / step_before : 0;
  if (std::fabs(share) < settings["min_step_share"]) return false;
  f->evidence["step_share_of_change"] = share;
  if (f->severity != Severity::kInfo) {
    f->severity =
        share >= settings["critical_magnitude"] ? Severity::kCritical : Severity::kWarning;
  }
  const double hours = LostGpuHoursPer1000Steps(std::fabs(delta_ms), gpus);
  f->message += "; " + Signed(delta_ms, 1) + " ms per step (" + Signed(share * 100, 1) + "% on a " +
                FormatFixed(step_before, 1) + " ms step): " + FormatFixed(hours, 2) +
                " GPU-hours " + (delta_ms >= 0 ? "more" : "fewer") + " lost per 1000 steps on " +
                std::to_string(gpus) + " GPUs";
  return true;
}

void Detect(const InputIndex& input, const DetectorSettings& settings,
            std::vector<Finding>* findings) {
  for (const auto& [key, runs] : StepSeries(input)) {
    const std::string name = StepSeriesName(key.first, key.second);
    for (Metric metric : {Metric::kStep, Metric::kExposed}) {
      RunSeries s{.subject = name + (metric == Metric::kStep ? "/step" : "/exposed"),
                  .runs = runs,
                  .values = {}};
      for (const RunView* run : runs) {
        const StepView& step = *input.Step(run->id);
        s.values.push_back(metric == Metric::kStep ? step.step_ms_p50 : step.exposed_ms_p50);
      }
      std::vector<Finding> found;
      DetectRunSeriesRegressions(input, settings, Spec(metric), s, &found);
      for (Finding& f : found) {
        const RunView& run = *input.Run(*f.run_id);
        if (AddStepCost(metric, *input.Step(run.id), run, settings, &f)) {
          findings->push_back(std::move(f));
        }
      }
    }
  }
}

const DetectorRegistrar kRegistered({
    .name = "step_regression",
    .summary = "step mode: a step series' step time or exposed communication rose night over "
               "night, against the recent baseline or since an E-divisive change point; what "
               "changed there; cost in GPU-hours per 1000 steps (warning; improvements as info)",
    .params = Params(),
    .detect = Detect,
});

}  // namespace
}  // namespace fabtrack::analyzer::step_regression_detector
