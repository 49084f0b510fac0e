// fabtrack runs list [--cluster NAME] [--limit N] [--format table|json|csv],
// runs ab [same flags], runs show ID, runs delete ID...
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <set>

#include "app/database_admin.h"
#include "app/run_catalog.h"
#include "cli/commands.h"
#include "cli/database_options.h"
#include "core/json_instances.h"
#include "core/text.h"

namespace fabtrack::cli {
namespace {

struct RunsOptions {
  std::optional<std::string> cluster;
  int limit = 50;
  std::string format = "table";
  DatabaseOptions database;
};

// A list cell: comma-joined, "-" for none (columns must not go empty).
std::string ListCell(const std::vector<std::string>& v) { return v.empty() ? "-" : Join(v, ","); }

template <typename T>
std::string Or(const std::optional<T>& v, const char* dash = "-") {
  if (!v) return dash;
  if constexpr (std::is_same_v<T, std::string>) {
    return *v;
  } else {
    return std::to_string(*v);
  }
}

// RFC 4180: a field with a comma, quote or line break is quoted, quotes doubled.
void WriteCsvRow(std::ostream& out, const std::vector<std::string>& fields) {
  for (size_t i = 0; i < fields.size(); ++i) {
    const std::string& f = fields[i];
    if (i) out << ',';
    if (f.find_first_of(",\"\r\n") == std::string::npos) {
      out << f;
      continue;
    }
    out << '"';
    for (char c : f) out << (c == '"' ? "\"\"" : std::string(1, c));
    out << '"';
  }
  out << "\r\n";
}

// Columns as wide as their widest cell, two spaces apart; the columns in
// `right` (numbers) right-aligned.
void PrintAligned(std::ostream& out, const std::vector<std::string>& header,
                  const std::vector<std::vector<std::string>>& rows,
                  const std::set<size_t>& right) {
  std::vector<size_t> width(header.size());
  for (size_t c = 0; c < header.size(); ++c) width[c] = header[c].size();
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string text;
    for (size_t c = 0; c < cells.size(); ++c) {
      const std::string pad(width[c] - cells[c].size(), ' ');
      if (c) text += "  ";
      text += right.count(c) ? pad + cells[c] : cells[c] + (c + 1 < cells.size() ? pad : "");
    }
    out << text << "\n";
  };
  line(header);
  for (const auto& row : rows) line(row);
}

void RunList(const RunsOptions& o) {
  std::vector<store::RunSummary> runs = app::ListRuns(o.database, {o.cluster, o.limit}, std::cerr);
  if (o.format == "json") {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& r : runs) {
      out.push_back(
          {{"id", r.id},
           {"cluster", r.cluster},
           {"started_at", r.started_at},
           {"source", r.source},
           {"collective", r.collective ? nlohmann::json(*r.collective) : nullptr},
           {"nodes", r.nodes ? nlohmann::json(*r.nodes) : nullptr},
           {"ranks", r.ranks ? nlohmann::json(*r.ranks) : nullptr},
           {"network", r.network ? nlohmann::json(*r.network) : nullptr},
           {"transports", r.transports},
           {"gdrdma", r.gdrdma ? nlohmann::json(*r.gdrdma) : nullptr},
           {"sizes", r.sizes},
           {"peak_busbw_gbps", r.peak_busbw_gbps ? nlohmann::json(*r.peak_busbw_gbps) : nullptr},
           {"lat_small_us", r.small_latency_us ? nlohmann::json(*r.small_latency_us) : nullptr},
           {"status", r.status}});
    }
    std::cout << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return;
  }
  // Table and CSV share one row layout; the table sizes every column to its
  // widest cell, so no value shifts the columns after it.
  const std::vector<std::string> header = {
      "id",      "started_at", "cluster", "source", "collective", "nodes",     "ranks",
      "network", "transports", "gdrdma",  "sizes",  "peak_busbw", "lat_small", "status"};
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : runs) {
    char busbw[32] = "-", latency[32] = "-";
    if (r.peak_busbw_gbps) std::snprintf(busbw, sizeof busbw, "%.2f", *r.peak_busbw_gbps);
    if (r.small_latency_us) std::snprintf(latency, sizeof latency, "%.2f", *r.small_latency_us);
    rows.push_back({std::to_string(r.id), r.started_at, r.cluster, r.source, Or(r.collective),
                    Or(r.nodes), Or(r.ranks), Or(r.network), ListCell(r.transports),
                    r.gdrdma ? (*r.gdrdma ? "yes" : "no") : "-", std::to_string(r.sizes), busbw,
                    latency, r.status});
  }
  if (o.format == "csv") {
    WriteCsvRow(std::cout, header);
    for (const auto& row : rows) WriteCsvRow(std::cout, row);
    return;
  }
  PrintAligned(std::cout, header, rows, {0, 5, 6, 10, 11, 12});
  if (runs.empty())
    std::cout << "(no runs" << (o.cluster ? " for cluster " + *o.cluster : "") << ")\n";
}

// `runs ab`: the stored `sweep --ab` comparisons, newest first, with the
// runs of both sides (`fabtrack diff` takes two of them).
void RunAbList(const RunsOptions& o) {
  const std::vector<store::AbSummary> comparisons =
      app::ListAbComparisons(o.database, {o.cluster, o.limit}, std::cerr);
  if (o.format == "json") {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& c : comparisons) {
      out.push_back({{"id", c.id},
                     {"cluster", c.cluster},
                     {"ab_id", c.ab_id},
                     {"compared_at", c.compared_at},
                     {"setting", c.setting},
                     {"rounds", c.rounds},
                     {"order", c.order},
                     {"outcome", c.outcome},
                     {"run_ids", c.run_ids}});
    }
    std::cout << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return;
  }
  const std::vector<std::string> header = {"id",    "compared_at", "cluster", "setting",
                                           "order", "outcome",     "runs",    "ab_id"};
  std::vector<std::vector<std::string>> rows;
  for (const auto& c : comparisons) {
    std::vector<std::string> ids;
    for (int64_t id : c.run_ids) ids.push_back(std::to_string(id));
    rows.push_back({std::to_string(c.id), c.compared_at, c.cluster, c.setting, c.order, c.outcome,
                    ListCell(ids), c.ab_id});
  }
  if (o.format == "csv") {
    WriteCsvRow(std::cout, header);
    for (const auto& row : rows) WriteCsvRow(std::cout, row);
    return;
  }
  PrintAligned(std::cout, header, rows, {0});
  if (comparisons.empty()) {
    std::cout << "(no A/B comparisons" << (o.cluster ? " for cluster " + *o.cluster : "")
              << "; `fabtrack sweep --ab` makes them)\n";
  }
}

// A jsonb value as text for the table: strings bare, null as "-".
std::string Text(const nlohmann::json& v) {
  if (v.is_null()) return "-";
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

std::string Number(const nlohmann::json& v, const char* format) {
  if (!v.is_number()) return "-";
  char text[32];
  std::snprintf(text, sizeof text, format, v.get<double>());
  return text;
}

void RunShow(const RunsOptions& o, int64_t id) {
  std::optional<nlohmann::json> detail = app::ReadRunDetail(o.database, id, std::cerr);
  if (!detail) {
    std::cerr << "fabtrack runs show: no run " << id << " in " << app::DescribeTarget(o.database)
              << " (`fabtrack runs list` shows the stored ones)\n";
    throw CommandExit{kExitInputError};
  }
  if (o.format == "json") {
    std::cout << detail->dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return;
  }
  const nlohmann::json& run = (*detail)["run"];
  std::cout << "run " << id << "  " << Text(run["cluster"]) << "  " << Text(run["started_at"])
            << "  " << Text(run["status"]) << "\n";
  // What a regression hunt compares first, in the order people read it.
  for (const char* key :
       {"source",      "source_file",  "command_line",   "collective",   "dtype",
        "nodes",       "ranks",        "ranks_per_node", "hosts",        "network",
        "transports",  "gdrdma",       "nccl_version",   "cuda_version", "driver_version",
        "mpi_version", "gpu_model",    "nccl_env",       "node_facts",   "parameters",
        "tags",        "slurm_job_id", "sweep_id",       "oob_count",    "avg_busbw_gbps"}) {
    if (run.contains(key) && !run[key].is_null() && !(run[key].is_object() && run[key].empty())) {
      std::printf("  %-15s %s\n", key, Text(run[key]).c_str());
    }
  }
  const nlohmann::json& results = (*detail)["results"];
  if (!results.empty()) {
    std::printf("\n  %12s %10s %9s %9s %7s %10s %10s %7s\n", "size (B)", "time (us)", "algbw",
                "busbw", "#wrong", "p50 (us)", "p99 (us)", "cv");
    for (const nlohmann::json& r : results) {
      std::printf("  %12s %10s %9s %9s %7s %10s %10s %7s\n", Text(r["size_bytes"]).c_str(),
                  Number(r["oop_time_us"], "%.2f").c_str(),
                  Number(r["oop_algbw_gbps"], "%.2f").c_str(),
                  Number(r["oop_busbw_gbps"], "%.2f").c_str(), Text(r["oop_wrong"]).c_str(),
                  Number(r["lat_p50_us"], "%.2f").c_str(), Number(r["lat_p99_us"], "%.2f").c_str(),
                  Number(r["lat_cv"], "%.3f").c_str());
    }
  }
  if (const nlohmann::json& t = (*detail)["transports"]; !t.empty()) {
    std::cout << "\n  transports:\n";
    for (const nlohmann::json& f : t) {
      std::cout << "    " << Text(f["family"]) << ": " << Text(f["channels"]) << " channel(s), "
                << Text(f["gdrdma_channels"]) << " with GDRDMA, hosts " << Text(f["hosts"]) << "\n";
    }
  }
  if (const nlohmann::json& e = (*detail)["log_events"]; !e.empty()) {
    std::cout << "\n  log lines kept:\n";
    for (const nlohmann::json& l : e) {
      std::cout << "    " << Text(l["level"]) << " line " << Text(l["line"]) << " "
                << Text(l["host"]) << ": " << Text(l["text"]) << "\n";
    }
  }
  if (const nlohmann::json& w = (*detail)["fabric_window"]; w.is_object()) {
    std::cout << "\n  switch cables (fabric scans " << Text(w["scanned_before"]) << " .. "
              << Text(w["scanned_after"]) << "): " << Text(w["links"]) << " of leaves "
              << Text(w["leaves"]) << "\n";
    for (const nlohmann::json& d : w.value("link_deltas", nlohmann::json::array())) {
      std::cout << "    " << (d.value("uplink", false) ? "uplink " : "cable ") << Text(d["link"]);
      for (const char* end : {"a", "b"}) {
        // Named: items() of a temporary would dangle in the loop.
        const nlohmann::json deltas = d[end].value("deltas", nlohmann::json::object());
        for (const auto& [counter, delta] : deltas.items()) {
          std::cout << "  " << counter << " +" << Text(delta) << " at "
                    << Text(d[end]["description"]) << "/" << Text(d[end]["port"]);
        }
      }
      std::cout << "\n";
    }
    if (!w["unmapped_hosts"].empty()) {
      std::cout << "    not found among the subnet's HCAs: " << Text(w["unmapped_hosts"]) << "\n";
    }
  }
  if (const nlohmann::json& f = (*detail)["findings"]; !f.empty()) {
    std::cout << "\n  findings:\n";
    for (const nlohmann::json& x : f) {
      std::cout << "    " << Text(x["severity"]) << "  " << Text(x["kind"]) << "  ("
                << Text(x["state"]) << ") " << Text(x["message"]) << "\n";
    }
  }
}

void RunDelete(const RunsOptions& o, std::vector<int64_t> ids, bool yes) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  const app::RunDeletion d = app::DeleteRuns(o.database, ids, yes, std::cerr);
  if (!d.missing.empty()) {
    for (int64_t id : d.missing) {
      std::cerr << "fabtrack runs delete: no run " << id << " in "
                << app::DescribeTarget(o.database) << "\n";
    }
    std::cerr << "fabtrack runs delete: nothing deleted\n";
    throw CommandExit{kExitInputError};
  }
  for (int64_t id : d.found) {
    std::cout << (d.deleted ? "deleted run " : "would delete run ") << id << "\n";
  }
  if (!d.deleted) std::cout << "dry run: nothing deleted; --yes deletes\n";
}

}  // namespace

void SetupRuns(CLI::App& app) {
  auto o = std::make_shared<RunsOptions>();
  CLI::App* runs = app.add_subcommand("runs", "Look at stored runs");
  runs->require_subcommand(1);
  CLI::App* list = runs->add_subcommand(
      "list", "List the newest runs (peak busbw in GB/s, latency of the smallest size in us)");
  list->add_option("--cluster", o->cluster, "only this cluster")->check(NameValue());
  list->add_option("--limit", o->limit, "at most this many runs")->check(PositiveCount());
  AddFormatOption(list, &o->format, {"table", "json", "csv"});
  AddDatabaseOptions(list, &o->database);
  list->callback([o] { RunList(*o); });
  CLI::App* ab = runs->add_subcommand(
      "ab",
      "List the stored A/B comparisons of `sweep --ab` (setting, verdict, the runs of both "
      "sides), newest first");
  ab->add_option("--cluster", o->cluster, "only this cluster");
  ab->add_option("--limit", o->limit, "at most this many comparisons")->check(PositiveCount());
  AddFormatOption(ab, &o->format, {"table", "json", "csv"});
  AddDatabaseOptions(ab, &o->database);
  ab->callback([o] { RunAbList(*o); });
  auto id = std::make_shared<int64_t>(0);
  CLI::App* show = runs->add_subcommand(
      "show",
      "One run in full: its facts, command line, NCCL settings, results, the log lines "
      "it kept and its findings");
  show->add_option("id", *id, "run id (from `runs list`)")->required()->check(StoredId());
  show->add_option("--format", o->format, "text (default) or json")
      ->check(CLI::IsMember({"table", "text", "json"}));
  AddDatabaseOptions(show, &o->database);
  show->callback([o, id] { RunShow(*o, *id); });

  auto ids = std::make_shared<std::vector<int64_t>>();
  CLI::App* del = runs->add_subcommand(
      "delete",
      "Delete runs and everything stored with them (results, samples, log lines); a dry run "
      "unless --yes, nothing deleted when an id is not there");
  del->add_option("ids", *ids, "run ids (from `runs list`)")->required()->check(StoredId());
  auto yes = std::make_shared<bool>(false);
  del->add_flag("--yes", *yes, "delete (without it: a dry run naming what would go)");
  AddDatabaseOptions(del, &o->database);
  del->callback([o, ids, yes] { RunDelete(*o, *ids, *yes); });
}

}  // namespace fabtrack::cli
