// The JSON report of NCCL's RAS (SET FORMAT json, NCCL >= 2.28.7): a dump of
// every communicator's ranks with their collective counts, and the ranks RAS
// could not reach. NCCL 2.28.7-2.28.9 write a missing rank's "nvml_dev"
// without the comma before "status" (fixed in 2.29); that one lost comma is
// put back so those reports are read whole.

#include "collector/ras/ras_report.h"
#include "core/json_instances.h"
#include "core/pattern.h"

namespace fabtrack::ras {
namespace {

// Ordered, so collective counts keep the report's order.
using json = nlohmann::ordered_json;

// Line number (1-based) of byte offset `at` in `text`.
size_t LineOf(std::string_view text, size_t at) {
  at = std::min(at, text.size());
  size_t n = 1;
  for (size_t i = 0; i < at; ++i) n += text[i] == '\n';
  return n;
}

// NCCL 2.28.7-2.28.9's missing-rank object: `"nvml_dev": N` then a newline
// and `"status"` with no comma. Only that pair is touched, so no other
// invalid JSON is made valid by accident.
std::string RestoreLostComma(std::string_view text) {
  static const Pattern kLost(R"(("nvml_dev": *-?\d+)(\s*\n\s*"status"))");
  return kLost.ReplaceAll(text, "$1,$2");
}

template <typename T>
T Get(const json& o, const char* key, T fallback) {
  auto it = o.find(key);
  if (it == o.end() || it->is_null()) return fallback;
  try {
    return it->get<T>();
  } catch (const json::exception&) {
    return fallback;
  }
}

void ReadCommunicators(const json& doc, Report* r) {
  r->nccl_version = Get<std::string>(doc, "nccl_version", "");
  auto ras = doc.find("ras");
  if (ras != doc.end() && ras->is_object()) {
    if (ras->contains("timeouts_count")) r->timeouts = Get<int>(*ras, "timeouts_count", 0);
    if (ras->contains("collection_time_sec")) {
      r->collection_s = Get<double>(*ras, "collection_time_sec", 0);
    }
  }
  auto comms = doc.find("communicators");
  if (comms == doc.end() || !comms->is_array()) {
    r->problems.push_back("no \"communicators\" array");
    return;
  }
  for (const json& c : *comms) {
    if (!c.is_object()) continue;
    JsonCommunicator comm;
    comm.hash = Get<std::string>(c, "hash", "");
    comm.size = Get<int>(c, "size", 0);
    if (auto ranks = c.find("ranks"); ranks != c.end() && ranks->is_array()) {
      for (const json& k : *ranks) {
        if (!k.is_object()) continue;
        JsonRank rank;
        rank.rank = Get<int>(k, "rank", -1);
        rank.host = Get<std::string>(k, "host", "");
        rank.pid = Get<int64_t>(k, "pid", 0);
        rank.cuda_dev = Get<int>(k, "cuda_dev", -1);
        rank.nvml_dev = Get<int>(k, "nvml_dev", -1);
        if (auto s = k.find("status"); s != k.end() && s->is_object()) {
          rank.init_state = Get<int>(*s, "init_state", 0);
          rank.async_error = Get<int>(*s, "async_error", 0);
          rank.finalize_called = Get<bool>(*s, "finalize_called", false);
          rank.destroy_flag = Get<bool>(*s, "destroy_flag", false);
          rank.abort_flag = Get<bool>(*s, "abort_flag", false);
        }
        if (auto cc = k.find("collective_counts"); cc != k.end() && cc->is_object()) {
          for (auto it = cc->begin(); it != cc->end(); ++it) {
            if (it->is_number_integer() || it->is_number_unsigned()) {
              rank.collective_counts.emplace_back(it.key(), it->get<int64_t>());
            }
          }
        }
        comm.ranks.push_back(std::move(rank));
      }
    }
    if (auto missing = c.find("missing_ranks"); missing != c.end() && missing->is_array()) {
      for (const json& k : *missing) {
        if (!k.is_object()) continue;
        JsonMissingRank m;
        m.rank = Get<int>(k, "rank", -1);
        m.host = Get<std::string>(k, "host", "");
        m.pid = Get<int64_t>(k, "pid", 0);
        m.cuda_dev = Get<int>(k, "cuda_dev", -1);
        m.nvml_dev = Get<int>(k, "nvml_dev", -1);
        if (auto s = k.find("status"); s != k.end() && s->is_object()) {
          m.unresponsive = Get<bool>(*s, "unresponsive", false);
          m.considered_dead = Get<bool>(*s, "considered_dead", false);
        }
        comm.missing_ranks.push_back(std::move(m));
      }
    }
    r->communicators.push_back(std::move(comm));
  }
}

}  // namespace

Report ParseRasJson(std::string_view text) {
  Report r;
  r.format = "json";
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    std::string repaired = RestoreLostComma(text);
    if (repaired != text) {
      doc = json::parse(repaired, nullptr, false);
      r.json_repaired = !doc.is_discarded();
    }
  }
  if (doc.is_discarded()) {
    // Say where: the parser's byte offset, as a line.
    try {
      json ignored = json::parse(text);
      (void)ignored;
    } catch (const json::parse_error& e) {
      bool at_end = e.byte >= text.size();
      r.problems.push_back(
          "line " + std::to_string(LineOf(text, e.byte ? e.byte - 1 : 0)) +
          (at_end ? ": the reply ends before the JSON report does" : ": not valid JSON"));
    } catch (const json::exception& e) {
      r.problems.push_back(std::string("not valid JSON: ") + e.what());
    }
    if (r.problems.empty()) r.problems.push_back("not valid JSON");
    return r;
  }
  if (!doc.is_object()) {
    r.problems.push_back("line 1: the JSON report is not an object");
    return r;
  }
  ReadCommunicators(doc, &r);
  r.complete = r.problems.empty();
  return r;
}

}  // namespace fabtrack::ras
