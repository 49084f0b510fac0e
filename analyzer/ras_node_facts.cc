#include "analyzer/ras_node_facts.h"

#include <cctype>
#include <cstdio>
#include <map>

namespace fabtrack::analyzer {
namespace {

std::optional<int> LeadingIndex(const std::string& text, size_t at) {
  size_t end = at;
  while (end < text.size() && end - at < 6 && std::isdigit(static_cast<unsigned char>(text[end])))
    ++end;
  if (end == at) return std::nullopt;
  return std::stoi(text.substr(at, end - at));
}

std::string RateText(double gbps) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g Gb/s", gbps);
  return buf;
}

// How a fact reads in a line: the key, then its value; the topology's
// fingerprint (a sha256) shortened as git shortens a hash.
std::string FactText(const std::string& key, const std::string& value) {
  if (key == "topology") return "GPU/NIC wiring " + value.substr(0, 12);
  return key + " " + value;
}

std::string ValueText(const std::string& key, const std::string& value) {
  return key == "topology" ? value.substr(0, 12) : value;
}

}  // namespace

std::optional<int> TopologyGpuIndex(const std::string& gpu) {
  // A process RAS's events name with several GPUs ("0,1 (NVML 2,3)") has
  // no one NIC.
  if (gpu.find(',') != std::string::npos) return std::nullopt;
  static const std::string kNvml = "(NVML ";
  if (size_t at = gpu.find(kNvml); at != std::string::npos) {
    return LeadingIndex(gpu, at + kNvml.size());
  }
  return LeadingIndex(gpu, 0);
}

std::map<std::string, std::string> LinkFactsOf(const std::string& host,
                                               const std::vector<HostPortReading>& readings) {
  // Newest reading with a rate, per port.
  std::map<std::pair<std::string, int>, const HostPortReading*> newest;
  for (const HostPortReading& r : readings) {
    if (r.host != host || !r.rate_gbps) continue;
    const HostPortReading*& n = newest[{r.device, r.port}];
    if (n == nullptr || r.sampled_at_s >= n->sampled_at_s) n = &r;
  }
  std::map<std::string, std::string> facts;
  for (const auto& [port, r] : newest) {
    facts["link " + port.first + "/" + std::to_string(port.second)] = RateText(*r->rate_gbps);
  }
  return facts;
}

void AttachNodeFacts(const RasHostKnowledge& known, const std::vector<HostPortReading>& readings,
                     const std::set<std::string>& job_hosts, RasWatchVerdict* verdict) {
  // Every job host's facts, and per fact how many of them hold each value:
  // a host's "others" are these counts less its own (a finding of 10^4 hosts
  // in a job of 10^4 is not compared host by host).
  std::map<std::string, std::map<std::string, std::string>> facts;
  std::map<std::string, std::map<std::string, int>> holders;  // key -> value -> hosts
  for (const std::string& host : job_hosts) {
    std::map<std::string, std::string> f = LinkFactsOf(host, readings);
    if (auto it = known.facts.find(host); it != known.facts.end()) {
      f.insert(it->second.begin(), it->second.end());
    }
    for (const auto& [key, value] : f) ++holders[key][value];
    facts.emplace(host, std::move(f));
  }
  // GPU index -> nearest NIC, per host.
  std::map<std::string, std::map<std::string, std::string>> nic_of;
  for (const auto& [host, topology] : known.topologies) {
    for (const TopoGpu& g : topology.gpus) {
      if (!g.nic.empty()) nic_of[host][g.name] = g.nic;
    }
  }
  for (RasWatchFinding& finding : verdict->findings) {
    std::set<std::string> hosts;
    for (RasWatchRank& k : finding.ranks) {
      if (k.host.empty()) continue;
      hosts.insert(k.host);
      std::optional<int> index = TopologyGpuIndex(k.gpu);
      auto nics = nic_of.find(k.host);
      if (!index || nics == nic_of.end()) continue;
      if (auto it = nics->second.find("GPU" + std::to_string(*index)); it != nics->second.end()) {
        k.nic = it->second;
      }
    }
    std::vector<std::string> lines;
    for (const std::string& host : hosts) {
      auto mine = facts.find(host);
      if (mine == facts.end()) continue;  // not a host the watch mapped
      for (const auto& [key, value] : mine->second) {
        // The other hosts' values of this fact: the most common one, unique.
        int others = 0, top = 0, tied = 0;
        const std::string* common = nullptr;
        for (const auto& [v, n] : holders[key]) {
          int count = v == value ? n - 1 : n;
          others += count;
          if (count > top) {
            top = count;
            common = &v;
            tied = 1;
          } else if (count == top && count > 0) {
            ++tied;
          }
        }
        if (common == nullptr || tied > 1 || *common == value) continue;
        std::string line =
            host + ": " + FactText(key, value) + "; " + ValueText(key, *common) + " on ";
        if (top < others) line += std::to_string(top) + " of ";
        line += "the job's other " + std::to_string(others) + (others == 1 ? " host" : " hosts");
        lines.push_back(std::move(line));
      }
    }
    if (lines.size() > kNodeFactLines) {
      size_t more = lines.size() - kNodeFactLines;
      lines.resize(kNodeFactLines);
      lines.push_back("and " + std::to_string(more) + " more facts that differ");
    }
    finding.node_facts = std::move(lines);
  }
}

}  // namespace fabtrack::analyzer
