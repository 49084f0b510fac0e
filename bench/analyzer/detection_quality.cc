// Detection quality table for BENCHMARKS.md: labelled scenarios
// (tests/analyzer/scenario.h) replayed night by night through every detector.
// Usage: detection_quality [seeds, default 10]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "tests/analyzer/scenario.h"

using namespace fabtrack::analyzer::testing;

int main(int argc, char** argv) {
  const int seeds = argc > 1 ? std::atoi(argv[1]) : 10;
  struct Row {
    Fault fault;
    double magnitude;
  };
  const std::vector<Row> rows = {
      {Fault::kNone, 0},           {Fault::kBusbwDrop, 0.05},      {Fault::kBusbwDrop, 0.10},
      {Fault::kBusbwDrop, 0.20},   {Fault::kLatencyRise, 0.05},    {Fault::kLatencyRise, 0.10},
      {Fault::kLatencyRise, 0.20}, {Fault::kScalingCollapse, 0.3}, {Fault::kSocketFallback, 0},
      {Fault::kGdrdmaLost, 0},     {Fault::kSharedNic, 0},         {Fault::kJitter, 0},
      {Fault::kPortErrors, 0},
  };
  std::printf(
      "| scenario | magnitude | recall | nights to detection (median, max) | false alarms "
      "per 100 run-nights |\n|---|---|---|---|---|\n");
  for (const Row& row : rows) {
    int found = 0, run_nights = 0, false_alarms = 0;
    std::vector<int> delays;
    for (int seed = 1; seed <= seeds; ++seed) {
      ScenarioSpec spec{
          .fault = row.fault, .magnitude = row.magnitude, .seed = static_cast<uint64_t>(seed)};
      Score score = Evaluate(MakeScenario(spec));
      run_nights += score.run_nights;
      false_alarms += score.false_alarms;
      if (score.detected_night >= 0) {
        ++found;
        delays.push_back(score.detected_night - spec.fault_night + 1);
      }
    }
    std::sort(delays.begin(), delays.end());
    char magnitude[16] = "-", delay[32] = "-", recall[16] = "-";
    if (row.magnitude > 0)
      std::snprintf(magnitude, sizeof magnitude, "%.0f%%", row.magnitude * 100);
    if (row.fault != Fault::kNone) {
      std::snprintf(recall, sizeof recall, "%d/%d", found, seeds);
      if (!delays.empty()) {
        std::snprintf(delay, sizeof delay, "%d, %d", delays[delays.size() / 2], delays.back());
      }
    }
    std::printf("| %s | %s | %s | %s | %.2f |\n", FaultName(row.fault), magnitude, recall, delay,
                false_alarms * 100.0 / run_nights);
  }
  return 0;
}
