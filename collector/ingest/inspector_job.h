// Reduces parsed Inspector records to the job summary (core/inspector_job.h).
// Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "collector/parse/inspector_parser.h"
#include "core/inspector_job.h"

namespace fabtrack {

// The job id: `explicit_id` when given, else a slurm_job_id label, else the
// plugin's default dump directory name "nccl-inspector-<id>" found in
// `path`, else the last component of `path`.
std::string InspectorJobId(const std::vector<InspectorRecord>& records, const std::string& path,
                           const std::optional<std::string>& explicit_id);

InspectorJob BuildInspectorJob(const std::vector<InspectorRecord>& records, std::string job_id);

}  // namespace fabtrack
