#include "collector/parse/parse_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "collector/parse/line_cleaner.h"
#include "collector/parse/nccl_log_parser.h"
#include "collector/parse/nccl_tests_json_parser.h"
#include "collector/parse/nccl_tests_text_parser.h"
#include "core/run_record_json.h"

namespace fabtrack {
namespace {

bool LooksLikeJson(std::string_view text) {
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') continue;
    return c == '{';
  }
  return false;
}

// NUL bytes mean binary input: refuse early with one clear error instead of
// a flood of per-line complaints.
bool LooksBinary(std::string_view text) {
  return text.substr(0, 65536).find('\0') != std::string_view::npos;
}

// Fills the file-level NCCL version from nccl-tests' "nccl-library=23003"
// (NCCL_VERSION_CODE) when the log did not print one.
void VersionFromTables(ParsedFile* parsed) {
  if (parsed->log.nccl_version) return;
  for (const TestTable& t : parsed->tests) {
    if (t.nccl_version_code) {
      parsed->log.nccl_version = NcclVersionFromCode(*t.nccl_version_code);
      return;
    }
  }
}

// fabtrack-allreduce's own result file (core/run_record_json.h), shown as a
// table like any other. Returns false when the text is not one.
bool ParseHarnessResult(std::string_view text, ParsedFile* parsed) {
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !IsRunFile(doc)) return false;
  std::string error;
  std::optional<RunRecord> run = RunRecordFromJson(doc, &error);
  if (!run) {
    parsed->errors.push_back({1, "fabtrack-allreduce result file: " + error});
    return true;
  }
  TestTable t;
  t.collective = run->collective;
  t.ranks = run->ranks;
  t.hosts = run->hosts;
  t.devices = run->rank_devices;
  for (const ResultRow& r : run->results) t.rows.push_back(r.row);
  t.avg_busbw = run->avg_busbw_gbps;
  t.oob_ok = run->oob_ok;
  t.oob_count = run->oob_count;
  t.complete = run->status != RunStatus::kPartial;
  t.started_at = run->started_at;
  parsed->log.nccl_version = run->nccl_version;
  parsed->log.network = run->network;
  parsed->tests.push_back(std::move(t));
  return true;
}

}  // namespace

std::string NcclVersionFromCode(int code) {
  // NCCL_VERSION(X,Y,Z): X*1000+Y*100+Z before 2.9, X*10000+Y*100+Z since.
  int major, minor, patch;
  if (code >= 20900) {
    major = code / 10000;
    minor = (code % 10000) / 100;
    patch = code % 100;
  } else {
    major = code / 1000;
    minor = (code % 1000) / 100;
    patch = code % 100;
  }
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

ParsedFile ParseText(std::string_view text, const std::string& name) {
  ParsedFile parsed;
  parsed.file = name;
  if (LooksBinary(text)) {
    parsed.errors.push_back({0, "binary data (NUL bytes); not an nccl-tests output or NCCL log"});
    return parsed;
  }
  if (LooksLikeJson(text)) {
    if (ParseHarnessResult(text, &parsed)) return parsed;
    parsed.tests = ParseNcclTestsJson(text, &parsed.errors);
    VersionFromTables(&parsed);
    return parsed;
  }
  std::vector<CleanLine> lines = SplitAndClean(text);
  parsed.log = ParseNcclLog(lines, &parsed.errors);
  parsed.tests = ParseNcclTestsText(lines, &parsed.errors);
  VersionFromTables(&parsed);
  return parsed;
}

ParsedFile ParsePath(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    ParsedFile parsed;
    parsed.file = path;
    parsed.errors.push_back({0, std::string("cannot read: ") + std::strerror(errno)});
    return parsed;
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return ParseText(buffer.str(), path);
}

}  // namespace fabtrack
