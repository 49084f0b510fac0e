// `fabtrack sweep --ab SETTING=VALUE`: the same sweep run without (side A)
// and with (side B) one setting, in alternating order (A B B A ...), and the
// verdict on the difference against the noise of the repeats. Both sides are
// ordinary runs (tags ab_id, ab_side, ab_round; side B also ab_setting); this
// record is the comparison, stored in ab_comparisons (schema 016) or spooled.
// Plain data; its serializer is core/ab_comparison_json.h, its judge
// analyzer/ab_verdict.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fabtrack {

enum class AbOutcome {
  kNoDifference,  // within the noise of the repeats
  kBFaster,       // B better beyond the noise (more busbw, less time)
  kBSlower,       // B worse beyond the noise
  kMixed,         // (overall only) some figures better, some worse
  kInconclusive,  // too few repeats on a side to know the noise
};
// "no_difference", "b_faster", "b_slower", "mixed", "inconclusive".
const char* AbOutcomeName(AbOutcome outcome);
std::optional<AbOutcome> AbOutcomeFromName(const std::string& name);

// One figure compared: a series' headline (busbw over the bandwidth-bound
// sizes, time over the latency-bound ones) or one size's figure.
struct AbJudgement {
  std::string collective;
  int nodes = 0;
  std::string metric;                    // "busbw" (GB/s, higher is better) | "time" (us)
  std::optional<int64_t> size_bytes;     // nullopt: the headline
  std::vector<double> a, b;              // each side's value per round, round order
  double ratio = 0;                      // median(b) / median(a)
  double ratio_low = 0, ratio_high = 0;  // range of the per-round ratios b_i / a_i
  double noise = 0;  // the larger relative spread ((max - min) / median) of a side's repeats
  AbOutcome outcome = AbOutcome::kInconclusive;

  bool operator==(const AbJudgement&) const = default;
};

struct AbRecord {
  std::string cluster;
  std::string ab_id;        // the tag ab_id of every run of both sides
  std::string compared_at;  // RFC 3339, when the verdict was made
  std::string setting;      // as given: "NCCL_ALGO=Ring", "nccl-lib=/opt/nccl-2.21/lib"
  int rounds = 0;
  std::string order;  // sides in the order they ran: "ABBA"
  AbOutcome outcome = AbOutcome::kInconclusive;
  std::vector<AbJudgement> headlines;  // per (collective, nodes): busbw, time
  std::vector<AbJudgement> sizes;      // per (collective, nodes, size, metric)

  bool operator==(const AbRecord&) const = default;
};

}  // namespace fabtrack
