// busbw_regression (warning; critical from critical_magnitude; info for
// improvements): a series' bus bandwidth over the large-message band fell,
// tonight against the recent baseline (median/MAD) or since a change point
// that still holds. See analyzer/series_regression.h for the tests.
#include "analyzer/series_regression.h"

namespace fabtrack::analyzer::busbw_regression_detector {
namespace {

const SeriesRegressionSpec& Spec() {
  static const SeriesRegressionSpec spec{.kind = "busbw_regression",
                                         .metric_label = "busbw",
                                         .metric_field = "busbw_gbps",
                                         .unit = "GB/s",
                                         .metric = &ResultPoint::busbw_gbps,
                                         .higher_is_better = true,
                                         .band = SeriesRegressionSpec::Band::kLargest,
                                         .band_key = "min_size_bytes",
                                         .band_bytes = 64.0 * 1024 * 1024,
                                         .min_magnitude = 0.03};
  return spec;
}

const DetectorRegistrar kRegistered(SeriesRegressionDetector<Spec>(
    "bus bandwidth of a series fell over the large-message band (warning; "
    "improvements as info)"));

}  // namespace
}  // namespace fabtrack::analyzer::busbw_regression_detector
