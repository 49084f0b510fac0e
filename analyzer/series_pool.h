// The pooled verdict of a series regression detector (issue 32): one test
// per band and night over every multi-node series of the night, instead of
// one per series. Internal to the series-regression detectors.
//
// Each multi-node series' band point (series_table.h: the median over the
// band's sizes of value / reference) is compared with the median of its
// `baseline_runs` points before it, in units of its own noise for that run
// (stats/noise_model.h: the series' night-to-night noise plus the run's own
// within-run variance from its per-iteration spread; floored at noise_floor;
// the t-corrected z of stats/baseline_z.h), and the
// night's series are pooled by their noise (stats/pooled_shift.h). A fabric
// regression moves every node count at once: four series each 2 sigma worse
// are one 4 sigma verdict here, where series by series each fell under the
// threshold the correction for the number of series had raised. Three rules,
// in the worse direction only (improvements stay per series):
//  - one night: pooled z >= pooled_z and the pooled change at least
//    pooled_first_night_magnitude (larger than a busy night's few percent
//    on every series at once);
//  - two nights: tonight and the night before each pooled z >=
//    pooled_confirm_z and change >= pooled_min_magnitude;
//  - sequential: a one-sided CUSUM (stats/cusum.h) over the pooled z of the
//    last baseline_runs nights, k = 0.5, h for an average run length of
//    pooled_cusum_arl nights between false alarms, each night's z capped at
//    h / 2 (one outlier night cannot alarm alone), tonight still z >= 1.
//    A small shift that no single night shows adds up over nights.
// Every rule also asks the night's series without the one of the highest z
// to pool to z >= 1.5 and to at least half the change the rule asks of all
// of them: one series' large drop is that series' finding, not the band's. One finding per band and
// night, its subject the band's; the series behind it (each one's change, noise and z, and the
// change of each size of its band) are its evidence, beside their own per-series findings (which
// a shift too small for one series alone does not raise: the sizes are then only here).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/series_table.h"

namespace fabtrack::analyzer::series {

struct PoolSettings {
  double z = 4;
  double confirm_z = 2.5;
  double min_magnitude = 0.02;
  double first_night_magnitude = 0.07;
  double cusum_arl = 2000;  // nights; 0: no sequential rule
};

PoolSettings ReadPoolSettings(const DetectorSettings& s);

// One series' band point on one run, against its own recent level.
struct PoolPoint {
  const RunView* run = nullptr;
  int64_t night = 0;
  std::string subject;
  double change = 0;  // relative, positive when worse
  double sigma = 0;   // relative noise
  // change / sigma and the noise's degrees of freedom; z is their normal
  // equivalent (stats::NormalEquivalentZ), which JudgePool computes only for
  // the nights a judged night's rules read (a night's z is an incomplete
  // beta per series: for every night of three years it was a tenth of the
  // newest night's detect time).
  double t = 0, dof = 0;
  double z = 0;
  // Judged runs only: per size of the run's band, its change against the
  // same level (value / the size's reference / the series' level - 1,
  // positive when worse): the sizes behind the series' part of the verdict.
  std::vector<std::pair<int64_t, double>> sizes;
};

// The pool points of a multi-node series (none for a single-node one or a
// run series); those of judged runs carry their sizes.
void AddPoolPoints(const InputIndex& input, const SeriesTable& t, const ChangeSeries& c,
                   const Settings& s, const SeriesRegressionSpec& spec,
                   std::vector<PoolPoint>* pool);

// The pooled findings of the judged nights (sets the z of the points it
// reads).
void JudgePool(const InputIndex& input, std::vector<PoolPoint>& pool, const Settings& s,
               const PoolSettings& ps, const SeriesRegressionSpec& spec,
               std::vector<Finding>* findings);

}  // namespace fabtrack::analyzer::series
