// SummarizeInspector: Inspector records grouped per communicator and
// collective, with the slowest ranks and hosts.
#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "collector/parse/inspector_parser.h"
#include "core/statistics.h"

namespace fabtrack {

std::vector<InspectorGroupSummary> SummarizeInspector(const std::vector<InspectorRecord>& records,
                                                      const InspectorSummaryOptions& options) {
  using Key = std::tuple<std::string, std::string, int64_t>;
  std::map<Key, std::vector<const InspectorRecord*>> groups;
  for (const InspectorRecord& r : records) {
    std::string comm = r.comm_id ? *r.comm_id : r.comm_name.value_or("");
    groups[Key{comm, r.collective, r.message_bytes}].push_back(&r);
  }

  std::vector<InspectorGroupSummary> out;
  for (const auto& [key, recs] : groups) {
    InspectorGroupSummary s;
    std::tie(s.communicator, s.collective, s.message_bytes) = key;
    s.count = recs.size();
    std::vector<double> times, busbw;
    struct Acc {
      double sum = 0;
      size_t count = 0;
      std::string host;
    };
    std::map<int, Acc> ranks;
    std::map<std::string, Acc> hosts;
    for (const InspectorRecord* r : recs) {
      times.push_back(r->exec_time_us);
      if (r->busbw_gbps) busbw.push_back(*r->busbw_gbps);
      if (!s.nranks) s.nranks = r->nranks;
      if (r->rank) {
        Acc& a = ranks[*r->rank];
        if (a.count == 0) a.host = r->host.value_or("");
        a.sum += r->exec_time_us;
        ++a.count;
      }
      if (r->host) {
        Acc& h = hosts[*r->host];
        h.sum += r->exec_time_us;
        ++h.count;
      }
    }
    std::sort(times.begin(), times.end());
    s.median_us = stats::QuantileOfSorted(times, 0.5);
    s.p90_us = stats::QuantileOfSorted(times, 0.9);
    s.max_us = times.back();
    if (!busbw.empty()) s.median_busbw_gbps = *stats::Median(busbw);

    // Ratios to the typical participant; 0 when that is 0 and no ratio means anything.
    auto ratio = [](double mean, double ref) { return ref > 0 ? mean / ref : 0.0; };
    std::vector<double> rank_means;
    for (const auto& [rank, a] : ranks) rank_means.push_back(a.sum / a.count);
    if (!rank_means.empty()) s.median_rank_mean_us = *stats::Median(rank_means);
    for (const auto& [rank, a] : ranks) {
      double mean = a.sum / a.count;
      s.slowest_ranks.push_back({rank, a.host, a.count, mean, ratio(mean, *s.median_rank_mean_us)});
    }
    auto by_ratio = [](const auto& a, const auto& b) { return a.ratio > b.ratio; };
    std::stable_sort(s.slowest_ranks.begin(), s.slowest_ranks.end(), by_ratio);

    std::vector<double> host_means;
    for (const auto& [host, h] : hosts) host_means.push_back(h.sum / h.count);
    if (!hosts.empty()) {
      double ref = s.median_rank_mean_us ? *s.median_rank_mean_us : *stats::Median(host_means);
      for (const auto& [host, h] : hosts) {
        InspectorHostStat hs{host, h.count, h.sum / h.count, ratio(h.sum / h.count, ref), {}};
        double worst = -1;
        for (const auto& [rank, a] : ranks) {
          if (a.host == host && a.sum / a.count > worst) {
            worst = a.sum / a.count;
            hs.slowest_rank = rank;
          }
        }
        s.slowest_hosts.push_back(std::move(hs));
      }
      std::stable_sort(s.slowest_hosts.begin(), s.slowest_hosts.end(), by_ratio);
    }
    if (s.slowest_ranks.size() > options.top_n) s.slowest_ranks.resize(options.top_n);
    if (s.slowest_hosts.size() > options.top_n) s.slowest_hosts.resize(options.top_n);
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace fabtrack
