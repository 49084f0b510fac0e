// The verdict of `fabtrack sweep --ab`: did one setting change the figures
// beyond the noise of repeating the same sweep? Pure: over the runs of both
// sides, paired by round.
//
// One figure, measured a_1..a_n without and b_1..b_n with the setting:
//   ratio  = median(b) / median(a), and the range of the per-round b_i / a_i;
//   noise  = the larger relative spread (max - min) / median of one side's
//            repeats: what running the same thing again moves it by;
//   beyond = the two sides' values do not overlap (B's worst repeat beats A's
//            best, or the other way) and |ratio - 1| exceeds both twice the
//            noise and min_effect. With two or three repeats a side, sides
//            that merely do not overlap happen by chance (one time in three
//            with two each); a step of twice the repeats' own spread rarely
//            does.
// Fewer than two repeats a side: inconclusive (the noise is unknown).
#pragma once

#include <string>
#include <vector>

#include "core/ab_comparison.h"
#include "core/run_record.h"

namespace fabtrack::analyzer {

// Below this a difference is not worth a verdict even when the repeats agree
// to the last digit (a quiet test box): 2%.
constexpr double kAbMinEffect = 0.02;

// One figure; higher_is_better: busbw (true), time (false).
AbJudgement JudgeFigure(const std::vector<double>& a, const std::vector<double>& b,
                        bool higher_is_better, double min_effect = kAbMinEffect);

// A run of one side: 'A' (without the setting) or 'B' (with it), its round
// (1-based).
struct AbRun {
  char side = 'A';
  int round = 1;
  const RunRecord* run = nullptr;
};

// Judges every (collective, node count) the runs cover: its headline busbw
// (median over sizes >= 64 MiB, or the largest) and time (sizes <= 64 KiB),
// and each size measured in every round on both sides (out-of-place). Fills
// record->headlines, record->sizes and record->outcome (from the headlines:
// all within noise, one direction beyond it, or mixed).
void JudgeAbRuns(const std::vector<AbRun>& runs, AbRecord* record,
                 double min_effect = kAbMinEffect);

// "B faster by 12.3% (beyond noise 2.1%)", "no difference beyond noise (1.2% noise)".
std::string DescribeJudgement(const AbJudgement& judgement);
// The comparison as `sweep --ab` prints it.
std::string AbVerdictText(const AbRecord& record);

}  // namespace fabtrack::analyzer
