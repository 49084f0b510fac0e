#include "app/cpu_bracket.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "app/this_process.h"
#include "collector/counters/node_cpu.h"
#include "core/subprocess.h"

namespace fabtrack::app {
namespace {
namespace fs = std::filesystem;

class CpuBracket : public RunBracket {
 public:
  explicit CpuBracket(std::ostream& err) : err_(err) {}

  void Before(const sweep::SweepSpec& spec, const sweep::PlannedRun& run) override {
    before_ = Sample(spec, run, "before");
    after_.clear();
  }

  void After(const sweep::SweepSpec& spec, const sweep::PlannedRun& run) override {
    if (!before_.empty()) after_ = Sample(spec, run, "after");
  }

  void Attach(store::SpoolBatch* batch) const override {
    std::vector<NodeCpuWindow> windows;
    for (const auto& [host, after] : after_) {
      auto before = before_.find(host);
      if (before == before_.end()) continue;
      std::string why;
      if (std::optional<NodeCpuWindow> w = CutNodeCpuWindow(before->second, after, &why)) {
        windows.push_back(std::move(*w));
      } else {
        err_ << "fabtrack sweep: CPU window of " << host << ": " << why << "\n";
      }
    }
    batch->cpu_windows = std::move(windows);
  }

 private:
  // host -> its sample.
  std::map<std::string, NodeCpuSample> Sample(const sweep::SweepSpec& spec,
                                              const sweep::PlannedRun& run, const char* phase) {
    std::map<std::string, NodeCpuSample> samples;
    if (spec.launcher == sweep::Launcher::kLocal || spec.launcher == sweep::Launcher::kDirect) {
      NodeCpuReading reading = ReadNodeCpu("/proc", static_cast<int>(getpid()));
      if (!reading.error.empty()) {
        err_ << "fabtrack sweep: CPUs " << phase << ": " << reading.error << "\n";
        return samples;
      }
      reading.sample.host = LocalHostname();
      samples[reading.sample.host] = std::move(reading.sample);
      return samples;
    }
    const std::string stem =
        spec.sweep_id + ".nodes" + std::to_string(run.nodes) + ".cpu-" + phase + ".";
    int code = 0;
    try {
      code = RunAttached(sweep::PlanCpuSampling(spec, run, SelfPath(),
                                                spec.output_dir + "/" + stem + "{host}.json"));
    } catch (const std::exception& e) {
      err_ << "fabtrack sweep: CPUs " << phase << ": " << e.what() << "\n";
      return samples;
    }
    std::vector<fs::path> files;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(spec.output_dir, ec)) {
      const std::string name = entry.path().filename().string();
      if (name.rfind(stem, 0) == 0 && name.ends_with(".json")) files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& file : files) {
      std::ifstream in(file);
      std::string why = "not JSON";
      nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
      std::optional<NodeCpuSample> sample =
          doc.is_discarded() ? std::nullopt : NodeCpuSampleFromJson(doc, &why);
      fs::remove(file, ec);
      if (!sample) {
        err_ << file.string() << ":1: not a CPU sample (" << why << "), skipped\n";
        continue;
      }
      samples[sample->host] = std::move(*sample);
    }
    if (code != 0 || samples.size() != static_cast<size_t>(run.nodes)) {
      err_ << "fabtrack sweep: CPUs " << phase << ": " << samples.size() << " of " << run.nodes
           << " node(s) sampled (launcher exit " << code << ")\n";
    }
    return samples;
  }

  std::ostream& err_;
  std::map<std::string, NodeCpuSample> before_, after_;
};

}  // namespace

std::shared_ptr<RunBracket> MakeCpuBracket(std::ostream& err) {
  return std::make_shared<CpuBracket>(err);
}

}  // namespace fabtrack::app
