// ib_completion_error (critical): NCCL's InfiniBand/RoCE transport got an
// error completion ("NET/IB : Got completion from peer 10.0.0.2<41234> with
// error 12, opcode 0, len 0, vendor err 129 ... hca mlx5_0"), the most common
// real fabric fault: status 12 (IBV_WC_RETRY_EXC_ERR) means the transport
// retry counter ran out, a peer unreachable or a link lost mid-run. One
// finding per run and HCA (per host when the line names no HCA), with the
// status decoded to its libibverbs name, the peers, the vendor error and the
// log lines.
#include <map>
#include <set>
#include <tuple>

#include "analyzer/detector.h"
#include "analyzer/log_events.h"
#include "analyzer/run_facts.h"

namespace fabtrack::analyzer::ib_completion_error_detector {
namespace {

struct Errors {
  int count = 0;
  std::map<int, int> by_status;  // ibv_wc_status -> lines
  std::set<std::string> peers;
  std::set<int> vendor_errs;
  std::vector<int> lines;
};

void Detect(const InputIndex& input, const DetectorSettings&, std::vector<Finding>* findings) {
  for (const RunView* run : input.judged()) {
    // (host, HCA) -> what it saw; either may be unknown ("").
    std::map<std::pair<std::string, std::string>, Errors> by_hca;
    for (const LogEventView& e : input.LogEvents(run->id)) {
      const LogEventReading r = ReadLogEvent(e);
      if (r.kind != LogEventKind::kIbCompletionError) continue;
      Errors& x = by_hca[{e.host.value_or(""), r.device.value_or("")}];
      ++x.count;
      if (r.wc_status) ++x.by_status[*r.wc_status];
      if (r.peer) x.peers.insert(*r.peer);
      if (r.vendor_err) x.vendor_errs.insert(*r.vendor_err);
      if (e.line && x.lines.size() < 20) x.lines.push_back(*e.line);
    }
    for (const auto& [where, x] : by_hca) {
      const auto& [host, hca] = where;
      std::string place = host.empty() ? std::string() : host;
      if (!hca.empty()) place += (place.empty() ? "" : ":") + hca;
      Finding f = FindingForRun(*run, place.empty() ? SeriesName(*run) : "hca " + place,
                                Severity::kCritical);
      if (!host.empty()) f.host = host;
      if (!hca.empty()) f.device = hca;
      f.value = x.count;
      f.baseline = 0;
      f.unit = "IB error completions";
      // The most frequent status leads the message.
      int top = -1, top_count = 0;
      nlohmann::json statuses = nlohmann::json::array();
      for (const auto& [status, n] : x.by_status) {
        const char* name = WcStatusName(status);
        statuses.push_back({{"status", status},
                            {"name", name ? name : "unknown"},
                            {"meaning", WcStatusMeaning(status) ? WcStatusMeaning(status) : ""},
                            {"count", n}});
        if (n > top_count) top = status, top_count = n;
      }
      f.message = "NCCL's IB transport got " + std::to_string(x.count) + " error completion(s)";
      if (!place.empty()) f.message += " on " + place;
      if (top >= 0) f.message += ": " + DescribeWcStatus(top);
      if (!x.peers.empty()) {
        f.message += "; peer";
        f.message += x.peers.size() > 1 ? "s " : " ";
        size_t i = 0;
        for (const std::string& p : x.peers) {
          if (i == 3) {
            f.message += ", ...";
            break;
          }
          f.message += (i++ ? ", " : "") + p;
        }
      }
      if (!x.vendor_errs.empty())
        f.message += "; vendor err " + std::to_string(*x.vendor_errs.begin());
      if (!x.lines.empty()) f.message += " (line " + std::to_string(x.lines.front()) + ")";
      f.evidence = {{"statuses", statuses},
                    {"peers", std::vector<std::string>(x.peers.begin(), x.peers.end())},
                    {"vendor_errs", std::vector<int>(x.vendor_errs.begin(), x.vendor_errs.end())},
                    {"lines", x.lines}};
      findings->push_back(std::move(f));
    }
  }
}

const DetectorRegistrar kRegistered({
    .name = "ib_completion_error",
    .summary = "NET/IB error completions (status decoded, peer and HCA named) (critical)",
    .params = {},
    .detect = Detect,
});

}  // namespace
}  // namespace fabtrack::analyzer::ib_completion_error_detector
