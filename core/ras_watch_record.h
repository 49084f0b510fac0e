// What `fabtrack ras watch` stores for one job, as one batch: snapshots,
// RAS events and the verdict (any of them). The watch stores each as it
// comes; while the database is away they go to the spool in this shape
// (store/spool.h) and are stored by the next command that reaches it. The
// JSON is core/ras_snapshot.cc's, beside the snapshots' and verdicts'.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/json_instances.h"
#include "core/ras_event.h"
#include "core/ras_snapshot.h"

namespace fabtrack {

struct RasWatchRecord {
  std::string cluster;
  std::string job_id;
  std::vector<RasSnapshot> snapshots;
  std::vector<RasEvent> events;
  std::optional<RasWatchVerdict> verdict;
  bool operator==(const RasWatchRecord&) const = default;
};

nlohmann::json RasWatchRecordToJson(const RasWatchRecord& record);
// nullopt with the reason in `why` for a document of another shape.
std::optional<RasWatchRecord> RasWatchRecordFromJson(const nlohmann::json& doc, std::string* why);

}  // namespace fabtrack
