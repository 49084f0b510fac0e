// run_fabric (warning; critical for what did not answer): the switch side of
// a judged run's window (`sweep --fabric-scan`): the cables of the leaves the
// run's nodes hang on, uplinks included, scanned just before and just after
// the run, judged by the subnet scan's detectors (analyzer/fabric: error
// counters, XmitWait on uplinks, a cable gone down, a rate below its tier's)
// as two stored scans are. Each finding names both ends of the cable and is
// tied to the run; the uplinks among them are also cited in that run's other
// findings (CiteRunUplinks, analyzer/fabric/run_uplinks.h).
#include "analyzer/detector.h"
#include "analyzer/fabric/fabric_window.h"

namespace fabtrack::analyzer::run_fabric_detector {
namespace {

void Detect(const InputIndex& input, const DetectorSettings& settings,
            std::vector<Finding>* findings) {
  fabric_analysis::FabricThresholds thresholds;
  thresholds.min_error_delta = static_cast<uint64_t>(settings["min_error_delta"]);
  thresholds.xmit_wait_per_second = settings["xmit_wait_per_second"];
  for (const auto& [run_id, window] : input.input().run_fabric_windows) {
    const RunView* run = input.Run(run_id);
    if (!run || !input.input().Judged(*run)) continue;
    for (Finding& f : fabric_analysis::JudgeFabric(&window.before, window.after, thresholds)) {
      f.run_id = run->id;
      f.run_started_at = run->started_at_iso;
      f.nodes = run->nodes;
      f.message = "during run " + std::to_string(run->id) + ": " + f.message;
      f.evidence["window"] = {{"scanned_before", window.before.scanned_at},
                              {"scanned_after", window.after.scanned_at},
                              {"leaves", window.leaves}};
      findings->push_back(std::move(f));
    }
  }
}

const DetectorRegistrar kRegistered({
    .name = "run_fabric",
    .summary = "a run's switch cables (its leaves' and their uplinks, `sweep --fabric-scan`): "
               "errors, XmitWait, links down or slow during the run (warning)",
    .params = {{"min_error_delta", 1, "error counts on a cable's two ends during the run"},
               {"xmit_wait_per_second", 1000,
                "PortXmitWait ticks per second on one end of an uplink"}},
    .detect = Detect,
});

}  // namespace
}  // namespace fabtrack::analyzer::run_fabric_detector
