// latency_regression (warning; critical from critical_magnitude; info for
// improvements): a series' small-message latency (time_us, out of place) rose,
// tonight against the recent baseline (median/MAD) or since a change point
// that still holds. See analyzer/series_regression.h for the tests.
#include "analyzer/detector.h"
#include "analyzer/series_regression.h"

namespace fabtrack::analyzer {
namespace {

const SeriesRegressionSpec& Spec() {
  static const SeriesRegressionSpec spec = [] {
    SeriesRegressionSpec s;
    s.kind = "latency_regression";
    s.metric_label = "latency";
    s.metric_field = "time_us";
    s.unit = "us";
    s.metric = &ResultPoint::time_us;
    s.higher_is_better = false;
    s.band = SeriesRegressionSpec::Band::kSmallest;
    s.band_key = "max_size_bytes";
    s.band_bytes = 64.0 * 1024;
    s.skip_oversubscribed = true;
    s.min_magnitude = 0.05;
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
    .name = "latency_regression",
    .summary = "small-message latency of a series rose (warning; "
               "improvements as info)",
    .params = SeriesRegressionParams(Spec()),
    .detect = Detect,
});

}  // namespace
}  // namespace fabtrack::analyzer
