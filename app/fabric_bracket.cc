#include "app/fabric_bracket.h"

#include <unistd.h>

#include "app/this_process.h"
#include "collector/fabric/run_window.h"
#include "core/text.h"

namespace fabtrack::app {
namespace {

class FabricScanBracket : public RunBracket {
 public:
  FabricScanBracket(fabric::ScanSettings settings, std::ostream& err)
      : settings_(std::move(settings)), err_(err) {}

  void Before(const sweep::SweepSpec&, const sweep::PlannedRun& run) override {
    before_ = Scan("before", run);
    after_.reset();
  }

  void After(const sweep::SweepSpec&, const sweep::PlannedRun& run) override {
    if (before_) after_ = Scan("after", run);
  }

  void Attach(store::SpoolBatch* batch) const override {
    if (!before_ || !after_) return;
    std::vector<std::string> hosts = batch->run.hosts;
    if (hosts.empty()) {
      // A run that names no host ran here (a local sweep).
      hosts.push_back(LocalHostname());
    }
    RunFabricWindow window = fabric::CutRunFabricWindow(*before_, *after_, hosts);
    if (!window.unmapped_hosts.empty()) {
      err_ << "fabtrack sweep: fabric scan: no HCA's node description names "
           << Join(window.unmapped_hosts, ", ")
           << " (expected \"<host> HCA-1\" or \"<host> mlx5_0\"); their leaves are not in the "
              "run's window\n";
    }
    batch->fabric_window = std::move(window);
  }

 private:
  std::optional<FabricScan> Scan(const char* phase, const sweep::PlannedRun& run) {
    fabric::ScanOutcome outcome = fabric::ScanSubnet(settings_);
    if (!outcome.scan) {
      err_ << "fabtrack sweep: " << run.nodes << " node(s): fabric scan " << phase << ": "
           << outcome.error << "; the run is stored without its switch ports\n";
      return std::nullopt;
    }
    err_ << "fabtrack sweep: fabric scan " << phase << ": " << outcome.scan->nodes.size()
         << " nodes, " << outcome.scan->links.size() << " links in " << outcome.scan->duration_s
         << " s\n";
    return std::move(outcome.scan);
  }

  fabric::ScanSettings settings_;
  std::ostream& err_;
  std::optional<FabricScan> before_, after_;
};

}  // namespace

std::shared_ptr<RunBracket> MakeFabricScanBracket(fabric::ScanSettings settings,
                                                  std::ostream& err) {
  return std::make_shared<FabricScanBracket>(std::move(settings), err);
}

}  // namespace fabtrack::app
