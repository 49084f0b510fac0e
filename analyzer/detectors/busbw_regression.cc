// busbw_regression (warning; critical from critical_magnitude; info for
// improvements): a series' bus bandwidth over the large-message band fell,
// tonight against the recent baseline (median/MAD) or since a change point
// that still holds. See analyzer/series_regression.h for the tests.
#include "analyzer/detector.h"
#include "analyzer/series_regression.h"

namespace fabtrack::analyzer {
namespace {

const SeriesRegressionSpec& Spec() {
  static const SeriesRegressionSpec spec = [] {
    SeriesRegressionSpec s;
    s.kind = "busbw_regression";
    s.metric_label = "busbw";
    s.metric_field = "busbw_gbps";
    s.unit = "GB/s";
    s.metric = &ResultPoint::busbw_gbps;
    s.higher_is_better = true;
    s.band = SeriesRegressionSpec::Band::kLargest;
    s.band_key = "min_size_bytes";
    s.band_bytes = 64.0 * 1024 * 1024;
    s.min_magnitude = 0.03;
    s.z_threshold = 3.5;
    s.confirm_z = 2;
    s.noise_floor = 0.01;
    return s;
  }();
  return spec;
}

void Detect(const InputIndex& input, const DetectorSettings& settings,
            std::vector<Finding>* findings) {
  DetectSeriesRegressions(input, settings, Spec(), findings);
}

const DetectorRegistrar kRegistered({
    .name = "busbw_regression",
    .summary = "bus bandwidth of a series fell over the large-message band (warning; "
               "improvements as info)",
    .params = SeriesRegressionParams(Spec()),
    .detect = Detect,
});

}  // namespace
}  // namespace fabtrack::analyzer
