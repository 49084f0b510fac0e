#include "collector/ingest/inspector_job.h"

#include <algorithm>
#include <set>

#include "core/clock.h"

namespace fabtrack {

std::string InspectorJobId(const std::vector<InspectorRecord>& records, const std::string& path,
                           const std::optional<std::string>& explicit_id) {
  if (explicit_id && !explicit_id->empty()) return *explicit_id;
  for (const InspectorRecord& r : records) {
    if (r.job_id && !r.job_id->empty()) return *r.job_id;
  }
  std::string trimmed = path;
  while (trimmed.size() > 1 && trimmed.back() == '/') trimmed.pop_back();
  // The plugin's default dump directory: nccl-inspector-<SLURM_JOBID>.
  const std::string prefix = "nccl-inspector-";
  if (size_t at = trimmed.rfind(prefix); at != std::string::npos) {
    const size_t from = at + prefix.size();
    const size_t end = trimmed.find('/', from);
    std::string id =
        trimmed.substr(from, end == std::string::npos ? std::string::npos : end - from);
    if (!id.empty()) return id;
  }
  size_t slash = trimmed.rfind('/');
  return slash == std::string::npos ? trimmed : trimmed.substr(slash + 1);
}

InspectorJob BuildInspectorJob(const std::vector<InspectorRecord>& records, std::string job_id) {
  InspectorJob job;
  job.job_id = std::move(job_id);
  job.records = static_cast<int64_t>(records.size());
  std::set<std::string> hosts;
  std::optional<int64_t> first, last;
  for (const InspectorRecord& r : records) {
    if (r.host) hosts.insert(*r.host);
    for (const std::optional<int64_t>& t : {r.start_us, r.timestamp_us}) {
      if (!t) continue;
      first = first ? std::min(*first, *t) : *t;
      last = last ? std::max(*last, *t) : *t;
    }
    if (r.nranks && (!job.nranks || *r.nranks > *job.nranks)) {
      job.nranks = r.nranks;
      job.nnodes = r.nnodes;
    }
  }
  job.hosts.assign(hosts.begin(), hosts.end());
  if (first) job.started_at = IsoFromSeconds(static_cast<double>(*first) / 1e6);
  if (last) job.ended_at = IsoFromSeconds(static_cast<double>(*last) / 1e6);
  for (const InspectorGroupSummary& g : SummarizeInspector(records)) {
    InspectorCollective c;
    c.communicator = g.communicator;
    c.collective = g.collective;
    c.message_bytes = g.message_bytes;
    c.nranks = g.nranks;
    c.count = static_cast<int64_t>(g.count);
    c.median_us = g.median_us;
    c.p90_us = g.p90_us;
    c.max_us = g.max_us;
    c.median_busbw_gbps = g.median_busbw_gbps;
    if (!g.slowest_ranks.empty()) {
      c.slowest_rank = g.slowest_ranks.front().rank;
      if (!g.slowest_ranks.front().host.empty()) c.slowest_rank_host = g.slowest_ranks.front().host;
      c.slowest_rank_ratio = g.slowest_ranks.front().ratio;
    }
    if (!g.slowest_hosts.empty()) {
      c.slowest_host = g.slowest_hosts.front().host;
      c.slowest_host_ratio = g.slowest_hosts.front().ratio;
    }
    job.collectives.push_back(std::move(c));
  }
  return job;
}

}  // namespace fabtrack
