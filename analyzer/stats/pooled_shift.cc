#include "analyzer/stats/pooled_shift.h"

#include <cmath>

namespace fabtrack::stats {

PooledShift PoolShifts(const std::vector<SeriesShift>& shifts) {
  PooledShift out;
  double weight = 0, weighted_change = 0, stouffer = 0;
  for (const SeriesShift& s : shifts) {
    if (!(s.sigma > 0) || !std::isfinite(s.change) || !std::isfinite(s.z)) continue;
    const double w = 1 / (s.sigma * s.sigma);
    weight += w;
    weighted_change += w * s.change;
    stouffer += s.z / s.sigma;
    ++out.series;
  }
  if (out.series == 0) return out;
  out.change = weighted_change / weight;
  out.se = 1 / std::sqrt(weight);
  out.z = stouffer * out.se;
  return out;
}

}  // namespace fabtrack::stats
