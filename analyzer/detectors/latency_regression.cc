// latency_regression (warning; critical from critical_magnitude; info for
// improvements): a series' small-message latency (time_us, out of place) rose,
// tonight against the recent baseline (median/MAD) or since a change point
// that still holds. See analyzer/series_regression.h for the tests.
#include "analyzer/series_regression.h"

namespace fabtrack::analyzer::latency_regression_detector {
namespace {

const SeriesRegressionSpec& Spec() {
  static const SeriesRegressionSpec spec{.kind = "latency_regression",
                                         .metric_label = "latency",
                                         .metric_field = "time_us",
                                         .unit = "us",
                                         .metric = &ResultPoint::time_us,
                                         .higher_is_better = false,
                                         .band = SeriesRegressionSpec::Band::kSmallest,
                                         .band_key = "max_size_bytes",
                                         .skip_oversubscribed = true,
                                         .band_bytes = 64.0 * 1024};
  return spec;
}

const DetectorRegistrar kRegistered(
    SeriesRegressionDetector<Spec>("small-message latency of a series rose (warning; "
                                   "improvements as info)"));

}  // namespace
}  // namespace fabtrack::analyzer::latency_regression_detector
