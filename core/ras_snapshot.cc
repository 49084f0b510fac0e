#include "core/ras_snapshot.h"

#include "core/json_dump_writer.h"
#include "core/ras_watch_record.h"

namespace fabtrack {
namespace {

nlohmann::json OptionalPid(const std::optional<int64_t>& pid) {
  return pid ? nlohmann::json(*pid) : nlohmann::json(nullptr);
}

std::optional<int64_t> PidFrom(const nlohmann::json& j) {
  auto it = j.find("pid");
  if (it == j.end() || it->is_null()) return std::nullopt;
  return it->get<int64_t>();
}

}  // namespace

nlohmann::json RasCommunicatorsJson(const std::vector<RasCommState>& comms) {
  nlohmann::json out = nlohmann::json::array();
  for (const RasCommState& c : comms) {
    nlohmann::json ranks = nlohmann::json::array();
    for (const RasRankState& k : c.ranks) {
      // Counts as [name, count] pairs: the report's order is kept.
      nlohmann::json counts = nlohmann::json::array();
      for (const auto& [op, n] : k.op_counts) counts.push_back({op, n});
      ranks.push_back({{"rank", k.rank},
                       {"node", k.node},
                       {"host", k.host},
                       {"gpu", k.gpu},
                       {"pid", OptionalPid(k.pid)},
                       {"state", k.state},
                       {"op_counts", std::move(counts)}});
    }
    out.push_back({{"id", c.id},
                   {"size", c.size},
                   {"state", c.state},
                   {"errors", c.errors},
                   {"ranks", std::move(ranks)}});
  }
  return out;
}

namespace {

using json_out::DumpWriter;
using json_out::Plain;

bool AllPlain(const std::vector<RasCommState>& comms) {
  for (const RasCommState& c : comms) {
    if (!Plain(c.id) || !Plain(c.state) || !Plain(c.errors)) return false;
    for (const RasRankState& k : c.ranks) {
      if (!Plain(k.node) || !Plain(k.host) || !Plain(k.gpu) || !Plain(k.state)) return false;
      for (const auto& [op, n] : k.op_counts) {
        if (!Plain(op)) return false;
      }
    }
  }
  return true;
}

// A DOM's dump, each line after the first prefixed.
std::string DumpOf(const nlohmann::json& dom, int indent, size_t indent_prefix,
                   nlohmann::json::error_handler_t handler) {
  std::string text = dom.dump(indent, ' ', false, handler);
  if (indent_prefix == 0) return text;
  std::string out;
  for (char c : text) {
    out.push_back(c);
    if (c == '\n') out.append(indent_prefix, ' ');
  }
  return out;
}

}  // namespace

std::string RasCommunicatorsDump(const std::vector<RasCommState>& comms, int indent,
                                 size_t indent_prefix, nlohmann::json::error_handler_t handler) {
  if (!AllPlain(comms)) {
    return DumpOf(RasCommunicatorsJson(comms), indent, indent_prefix, handler);
  }
  std::string out;
  DumpWriter w(&out, indent, indent_prefix);
  w.Objects(comms, [&](const RasCommState& c) {
    w.Field("errors", c.errors);
    w.Field("id", c.id);
    w.Field("ranks", c.ranks, [&](const RasRankState& k) {
      w.Place(k.gpu, k.host, k.node);
      w.Key("op_counts");
      w.Open('[');
      for (const auto& [op, n] : k.op_counts) {
        w.Element();
        w.Open('[');
        w.Element();
        w.String(op);
        w.Element();
        w.Number(n);
        w.Close(']', false);
      }
      w.Close(']', k.op_counts.empty());
      w.Field("pid", k.pid);
      w.Field("rank", k.rank);
      w.Field("state", k.state);
    });
    w.Field("size", c.size);
    w.Field("state", c.state);
  });
  return out;
}

std::vector<RasCommState> RasCommunicatorsFromJson(const nlohmann::json& j) {
  std::vector<RasCommState> out;
  for (const nlohmann::json& c : j) {
    RasCommState comm;
    comm.id = c.at("id").get<std::string>();
    comm.size = c.at("size").get<int>();
    comm.state = c.at("state").get<std::string>();
    comm.errors = c.at("errors").get<std::string>();
    for (const nlohmann::json& k : c.at("ranks")) {
      RasRankState r;
      r.rank = k.at("rank").get<int>();
      r.node = k.at("node").get<std::string>();
      r.host = k.at("host").get<std::string>();
      r.gpu = k.at("gpu").get<std::string>();
      r.pid = PidFrom(k);
      r.state = k.at("state").get<std::string>();
      for (const nlohmann::json& p : k.at("op_counts")) {
        r.op_counts.emplace_back(p.at(0).get<std::string>(), p.at(1).get<int64_t>());
      }
      comm.ranks.push_back(std::move(r));
    }
    out.push_back(std::move(comm));
  }
  return out;
}

bool RasWatchVerdict::Stuck() const {
  for (const RasWatchFinding& f : findings) {
    if (f.kind == "stuck") return true;
  }
  return false;
}

bool RasWatchVerdict::PeerDead() const {
  for (const RasWatchFinding& f : findings) {
    if (f.kind == "peer_dead") return true;
  }
  return false;
}

nlohmann::json RasWatchVerdictJson(const RasWatchVerdict& v) {
  nlohmann::json findings = nlohmann::json::array();
  for (const RasWatchFinding& f : v.findings) {
    nlohmann::json ranks = nlohmann::json::array();
    for (const RasWatchRank& k : f.ranks) {
      ranks.push_back({{"rank", k.rank},
                       {"node", k.node},
                       {"host", k.host},
                       {"gpu", k.gpu},
                       {"nic", k.nic},
                       {"pid", OptionalPid(k.pid)},
                       {"detail", k.detail}});
    }
    findings.push_back({{"kind", f.kind},
                        {"severity", f.severity},
                        {"communicator", f.communicator},
                        {"message", f.message},
                        {"since", f.since},
                        {"ranks", std::move(ranks)},
                        {"port_changes", f.port_changes},
                        {"node_facts", f.node_facts}});
  }
  return {{"health", v.health},
          {"snapshots", v.snapshots},
          {"first_taken_at", v.first_taken_at},
          {"last_taken_at", v.last_taken_at},
          {"findings", std::move(findings)}};
}

std::string RasWatchVerdictDump(const RasWatchVerdict& v, int indent, size_t indent_prefix,
                                nlohmann::json::error_handler_t handler) {
  bool plain = Plain(v.health) && Plain(v.first_taken_at) && Plain(v.last_taken_at);
  for (const RasWatchFinding& f : v.findings) {
    plain = plain && Plain(f.kind) && Plain(f.severity) && Plain(f.communicator) &&
            Plain(f.message) && Plain(f.since);
    for (const std::string& p : f.port_changes) plain = plain && Plain(p);
    for (const std::string& p : f.node_facts) plain = plain && Plain(p);
    for (const RasWatchRank& k : f.ranks) {
      plain = plain && Plain(k.node) && Plain(k.host) && Plain(k.gpu) && Plain(k.nic) &&
              Plain(k.detail);
    }
  }
  if (!plain) return DumpOf(RasWatchVerdictJson(v), indent, indent_prefix, handler);
  std::string out;
  DumpWriter w(&out, indent, indent_prefix);
  w.Open('{');
  w.Field("findings", v.findings, [&](const RasWatchFinding& f) {
    w.Field("communicator", f.communicator);
    w.Field("kind", f.kind);
    w.Field("message", f.message);
    w.Field("node_facts", f.node_facts);
    w.Field("port_changes", f.port_changes);
    w.Field("ranks", f.ranks, [&](const RasWatchRank& k) {
      w.Field("detail", k.detail);
      w.Field("gpu", k.gpu);
      w.Field("host", k.host);
      w.Field("nic", k.nic);
      w.Field("node", k.node);
      w.Field("pid", k.pid);
      w.Field("rank", k.rank);
    });
    w.Field("severity", f.severity);
    w.Field("since", f.since);
  });
  w.Field("first_taken_at", v.first_taken_at);
  w.Field("health", v.health);
  w.Field("last_taken_at", v.last_taken_at);
  w.Field("snapshots", v.snapshots);
  w.Close('}', false);
  return out;
}

RasWatchVerdict RasWatchVerdictFromJson(const nlohmann::json& j) {
  RasWatchVerdict v;
  v.health = j.at("health").get<std::string>();
  v.snapshots = j.at("snapshots").get<int>();
  v.first_taken_at = j.at("first_taken_at").get<std::string>();
  v.last_taken_at = j.at("last_taken_at").get<std::string>();
  for (const nlohmann::json& f : j.at("findings")) {
    RasWatchFinding finding;
    finding.kind = f.at("kind").get<std::string>();
    finding.severity = f.at("severity").get<std::string>();
    finding.communicator = f.at("communicator").get<std::string>();
    finding.message = f.at("message").get<std::string>();
    finding.since = f.at("since").get<std::string>();
    for (const nlohmann::json& k : f.at("ranks")) {
      RasWatchRank r;
      r.rank = k.at("rank").get<int>();
      r.node = k.at("node").get<std::string>();
      r.host = k.at("host").get<std::string>();
      r.gpu = k.at("gpu").get<std::string>();
      r.nic = k.value("nic", "");  // verdicts stored before it named NICs have none
      r.pid = PidFrom(k);
      r.detail = k.at("detail").get<std::string>();
      finding.ranks.push_back(std::move(r));
    }
    finding.port_changes = f.at("port_changes").get<std::vector<std::string>>();
    finding.node_facts = f.value("node_facts", std::vector<std::string>{});
    v.findings.push_back(std::move(finding));
  }
  return v;
}

nlohmann::json RasWatchRecordToJson(const RasWatchRecord& record) {
  nlohmann::json snapshots = nlohmann::json::array();
  for (const RasSnapshot& s : record.snapshots) {
    snapshots.push_back({{"taken_at", s.taken_at},
                         {"taken_at_s", s.taken_at_s},
                         {"report_format", s.report_format},
                         {"nccl_version", s.nccl_version},
                         {"health", s.health},
                         {"communicators", RasCommunicatorsJson(s.communicators)}});
  }
  nlohmann::json events = nlohmann::json::array();
  for (const RasEvent& e : record.events) {
    events.push_back({{"event_time", e.event_time},
                      {"received_at", e.received_at},
                      {"group", e.group},
                      {"event", e.event},
                      {"known", e.known},
                      {"node", e.node},
                      {"port", e.port},
                      {"host", e.host},
                      {"pid", OptionalPid(e.pid)},
                      {"gpus", e.gpus},
                      {"details", e.details},
                      {"format", e.format},
                      {"raw", e.raw},
                      {"line", e.line}});
  }
  return {
      {"cluster", record.cluster},
      {"job_id", record.job_id},
      {"snapshots", std::move(snapshots)},
      {"events", std::move(events)},
      {"verdict", record.verdict ? RasWatchVerdictJson(*record.verdict) : nlohmann::json(nullptr)}};
}

std::optional<RasWatchRecord> RasWatchRecordFromJson(const nlohmann::json& doc, std::string* why) {
  try {
    RasWatchRecord r;
    r.cluster = doc.at("cluster").get<std::string>();
    r.job_id = doc.at("job_id").get<std::string>();
    for (const nlohmann::json& j : doc.at("snapshots")) {
      RasSnapshot s;
      s.cluster = r.cluster;
      s.job_id = r.job_id;
      s.taken_at = j.at("taken_at").get<std::string>();
      s.taken_at_s = j.at("taken_at_s").get<double>();
      s.report_format = j.at("report_format").get<std::string>();
      s.nccl_version = j.at("nccl_version").get<std::string>();
      s.health = j.at("health").get<std::string>();
      s.communicators = RasCommunicatorsFromJson(j.at("communicators"));
      r.snapshots.push_back(std::move(s));
    }
    for (const nlohmann::json& j : doc.at("events")) {
      RasEvent e;
      e.event_time = j.at("event_time").get<std::string>();
      e.received_at = j.at("received_at").get<std::string>();
      e.group = j.at("group").get<std::string>();
      e.event = j.at("event").get<std::string>();
      e.known = j.at("known").get<bool>();
      e.node = j.at("node").get<std::string>();
      e.port = j.at("port").get<std::string>();
      e.host = j.at("host").get<std::string>();
      e.pid = PidFrom(j);
      e.gpus = j.at("gpus").get<std::string>();
      e.details = j.at("details").get<std::string>();
      e.format = j.at("format").get<std::string>();
      e.raw = j.at("raw").get<std::string>();
      e.line = j.at("line").get<int>();
      r.events.push_back(std::move(e));
    }
    if (const nlohmann::json& v = doc.at("verdict"); !v.is_null())
      r.verdict = RasWatchVerdictFromJson(v);
    if (r.cluster.empty() || r.job_id.empty()) {
      *why = "a RAS record without its cluster or job";
      return std::nullopt;
    }
    return r;
  } catch (const nlohmann::json::exception& e) {
    *why = std::string("not a RAS record: ") + e.what();
    return std::nullopt;
  }
}

}  // namespace fabtrack
