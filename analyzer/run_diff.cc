#include "analyzer/run_diff.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "analyzer/run_facts.h"

namespace fabtrack::analyzer {
namespace {

// Columns that say when, where from or under which id a run was stored, or
// that are compared apart (hosts as sets, the maps key by key), or are
// results rather than facts. Every other column is a fact about how it ran:
// one a migration adds is compared without a change here.
const std::set<std::string> kNotFacts = {
    "id",           "cluster",       "started_at",   "ended_at",       "ingested_at",
    "source_file",  "content_hash",  "table_index",  "hosts_digest",   "sweep_id",
    "slurm_job_id", "slurm_step_id", "command_line", "hosts",          "nccl_env",
    "node_facts",   "parameters",    "tags",         "avg_busbw_gbps", "oob_ok",
    "oob_count"};

nlohmann::json At(const nlohmann::json& doc, const char* key) {
  return doc.contains(key) ? doc[key] : nlohmann::json();
}

// Map-valued columns compared entry by entry (NCCL_* settings, flags).
void DiffMap(const nlohmann::json& a, const nlohmann::json& b, const std::string& prefix,
             std::vector<FactChange>* out) {
  std::set<std::string> keys;
  if (a.is_object())
    for (const auto& [k, v] : a.items()) keys.insert(k);
  if (b.is_object())
    for (const auto& [k, v] : b.items()) keys.insert(k);
  for (const std::string& k : keys) {
    nlohmann::json va = a.is_object() && a.contains(k) ? a[k] : nlohmann::json();
    nlohmann::json vb = b.is_object() && b.contains(k) ? b[k] : nlohmann::json();
    if (va != vb) out->push_back({prefix + k, va, vb});
  }
}

// Out-of-place busbw and time by size.
std::map<int64_t, std::pair<double, double>> Rows(const nlohmann::json& results) {
  std::map<int64_t, std::pair<double, double>> rows;
  if (!results.is_array()) return rows;
  for (const auto& r : results) {
    if (!r.contains("size_bytes") || !r["size_bytes"].is_number()) continue;
    auto number = [&](const char* key) {
      return r.contains(key) && r[key].is_number() ? r[key].get<double>() : NAN;
    };
    rows[r["size_bytes"].get<int64_t>()] = {number("oop_busbw_gbps"), number("oop_time_us")};
  }
  return rows;
}

std::string Shown(const nlohmann::json& v) {
  if (v.is_null()) return "-";
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

std::string Describe(const nlohmann::json& doc) {
  const nlohmann::json& run = doc["run"];
  std::ostringstream s;
  s << "run " << Shown(At(run, "id")) << " (" << Shown(At(run, "started_at")) << ", "
    << Shown(At(run, "collective")) << ", " << Shown(At(run, "nodes")) << " node(s), "
    << Shown(At(run, "source")) << ")";
  return s.str();
}

}  // namespace

RunDiff DiffRuns(const nlohmann::json& a, const nlohmann::json& b) {
  RunDiff diff;
  const nlohmann::json& ra = a["run"];
  const nlohmann::json& rb = b["run"];
  std::set<std::string> columns;
  for (const auto& [key, value] : ra.items()) columns.insert(key);
  for (const auto& [key, value] : rb.items()) columns.insert(key);
  for (const std::string& key : columns) {
    if (kNotFacts.count(key)) continue;
    nlohmann::json va = At(ra, key.c_str()), vb = At(rb, key.c_str());
    if (va != vb) diff.facts.push_back({key, va, vb});
  }
  // Hosts as sets: the same nodes in another order are the same nodes.
  auto hosts = [](const nlohmann::json& run) {
    std::set<std::string> out;
    if (run.contains("hosts") && run["hosts"].is_array())
      for (const auto& h : run["hosts"]) out.insert(h.get<std::string>());
    return out;
  };
  const std::set<std::string> ha = hosts(ra), hb = hosts(rb);
  if (ha != hb) {
    nlohmann::json removed = nlohmann::json::array(), added = nlohmann::json::array();
    for (const auto& h : ha)
      if (!hb.count(h)) removed.push_back(h);
    for (const auto& h : hb)
      if (!ha.count(h)) added.push_back(h);
    diff.facts.push_back({"hosts", removed, added});
  }
  DiffMap(At(ra, "nccl_env"), At(rb, "nccl_env"), "", &diff.facts);
  DiffMap(At(ra, "node_facts"), At(rb, "node_facts"), "", &diff.facts);
  DiffMap(At(ra, "parameters"), At(rb, "parameters"), "parameter ", &diff.facts);
  DiffMap(At(ra, "tags"), At(rb, "tags"), "tag ", &diff.facts);

  const auto rows_a = Rows(At(a, "results")), rows_b = Rows(At(b, "results"));
  int64_t smallest = -1, largest = -1;
  for (const auto& [size, v] : rows_a) {
    if (!rows_b.count(size)) continue;
    if (smallest < 0) smallest = size;
    largest = size;
  }
  if (largest >= 0) {
    const auto& [bw_a, t_a] = rows_a.at(largest);
    const auto& [bw_b, t_b] = rows_b.at(largest);
    if (!std::isnan(bw_a) && !std::isnan(bw_b)) {
      diff.metrics.push_back({"busbw at " + FormatBytes(largest), largest, bw_a, bw_b, "GB/s"});
    }
    const auto& [sbw_a, st_a] = rows_a.at(smallest);
    const auto& [sbw_b, st_b] = rows_b.at(smallest);
    if (!std::isnan(st_a) && !std::isnan(st_b)) {
      diff.metrics.push_back({"time at " + FormatBytes(smallest), smallest, st_a, st_b, "us"});
    }
  }
  return diff;
}

std::string RunDiffText(const nlohmann::json& a, const nlohmann::json& b, const RunDiff& diff) {
  std::ostringstream out;
  out << Describe(a) << "\n  vs " << Describe(b) << "\n";
  if (diff.facts.empty()) out << "  same facts (versions, settings, network, hosts, flags)\n";
  for (const FactChange& f : diff.facts) {
    if (f.name == "hosts") {
      out << "  hosts: -" << Shown(f.before) << " +" << Shown(f.after) << "\n";
    } else {
      out << "  " << f.name << ": " << Shown(f.before) << " → " << Shown(f.after) << "\n";
    }
  }
  for (const MetricChange& m : diff.metrics) {
    char line[160];
    std::snprintf(line, sizeof line, "  %s: %.2f → %.2f %s (%+.1f%%)\n", m.name.c_str(), m.before,
                  m.after, m.unit.c_str(), m.before != 0 ? (m.after / m.before - 1) * 100 : 0.0);
    out << line;
  }
  return out.str();
}

nlohmann::json RunDiffJson(const nlohmann::json& a, const nlohmann::json& b, const RunDiff& diff) {
  nlohmann::json facts = nlohmann::json::array(), metrics = nlohmann::json::array();
  for (const FactChange& f : diff.facts) {
    facts.push_back({{"name", f.name}, {"before", f.before}, {"after", f.after}});
  }
  for (const MetricChange& m : diff.metrics) {
    metrics.push_back({{"name", m.name},
                       {"size_bytes", m.size_bytes},
                       {"before", m.before},
                       {"after", m.after},
                       {"unit", m.unit}});
  }
  return {
      {"a", At(a["run"], "id")}, {"b", At(b["run"], "id")}, {"facts", facts}, {"metrics", metrics}};
}

}  // namespace fabtrack::analyzer
