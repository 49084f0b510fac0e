// The harness result file: a RunRecord as JSON, written by fabtrack-allreduce
// (for nodes that cannot reach the database) and read back by `fabtrack
// ingest`. Versioned by "format" and "version".
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/json_instances.h"
#include "core/run_record.h"

namespace fabtrack {

inline constexpr const char* kRunFileFormat = "fabtrack-allreduce-result";
inline constexpr int kRunFileVersion = 1;

nlohmann::json RunRecordToJson(const RunRecord& run);
// Appends RunRecordToJson(run).dump() to *out, byte for byte, without
// building the whole document: a run of 300k result rows is ~140 MB of text
// but ten times that as a document (the spool writes batches this way).
void AppendRunRecordJson(const RunRecord& run, std::string* out);

// True when the document claims to be a harness result file.
bool IsRunFile(const nlohmann::json& document);

// Reads a result file; on a missing or mistyped field returns nullopt and
// sets *error to a message naming the field.
std::optional<RunRecord> RunRecordFromJson(const nlohmann::json& document, std::string* error);

// RunRecordFromJson(json::parse(text)[run_key]) (run_key empty: the whole
// document) without ever holding the record's long lists (results, latency
// samples, rank timings) as a document: each element is read as soon as it
// is parsed and dropped, so a 300k-row run takes its records' memory, not
// ten times that. *document receives the rest of the document (those lists
// empty). Errors as RunRecordFromJson's, or "not JSON: ...".
std::optional<RunRecord> ParseRunRecordText(std::string_view text, const std::string& run_key,
                                            nlohmann::json* document, std::string* error);

}  // namespace fabtrack
