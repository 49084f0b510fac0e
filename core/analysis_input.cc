#include "core/analysis_input.h"

#include <algorithm>

#include "core/content_hash.h"

namespace fabtrack {

std::string RunsDigestThrough(const std::vector<RunView>& runs, double through) {
  // By id, so that the reader's order does not matter; the status is in it
  // because a run written while running is finished (and judged) later.
  std::vector<const RunView*> sorted;
  sorted.reserve(runs.size());
  for (const RunView& run : runs) {
    if (run.started_at <= through) sorted.push_back(&run);
  }
  std::sort(sorted.begin(), sorted.end(),
            [](const RunView* a, const RunView* b) { return a->id < b->id; });
  std::string text;
  text.reserve(sorted.size() * 16);
  for (const RunView* run : sorted) {
    text += std::to_string(run->id);
    text += ':';
    text += run->status;
    text += ',';
  }
  return Sha256Hex(text);
}

std::string RunsDigest(const std::vector<RunView>& runs) {
  double newest = 0;
  for (const RunView& run : runs) newest = std::max(newest, run.started_at);
  return RunsDigestThrough(runs, newest);
}

}  // namespace fabtrack
