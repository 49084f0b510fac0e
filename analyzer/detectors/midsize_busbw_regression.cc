// midsize_busbw_regression (warning; critical from critical_magnitude; info
// for improvements): a series' bus bandwidth over the medium message band
// (between latency_regression's small band and busbw_regression's large one)
// fell, tonight against the recent baseline (median/MAD), since a change point
// that still holds, or pooled over the night's multi-node series. See
// analyzer/series_regression.h for the tests.
//
// Why a band of its own. NCCL picks its protocol by message size: LL (8-byte
// stores with flags, lowest latency) for the smallest messages, LL128 in the
// middle, Simple (full bandwidth, highest latency) for the largest, and its
// tuner moves the switch-overs with the node count, the GPU and the network
// (NCCL_PROTO, NCCL_ALGO, a tuner plugin or an NCCL upgrade move them too).
// A fault in LL128 or in the ring/tree choice at mid sizes -- LL128 turned
// off, a tuning table that now picks the wrong algorithm, a proxy that is
// slow to post mid-size sends -- shows at 128 KiB .. 32 MiB only: the small
// band (latency, <= 64 KiB, LL) and the large band (busbw, >= 64 MiB, Simple)
// stay where they were, and neither detector looks at these sizes.
//
// The bounds. Exclusive, and by default the other bands' own bounds: sizes >
// latency_regression's max_size_bytes (64 KiB) and < busbw_regression's
// min_size_bytes (64 MiB), so the three bands partition the sizes (the size
// column is an integer count of bytes, results.size_bytes; nccl-tests' -f 2
// sweep puts 128 KiB .. 32 MiB, ten sizes, here). A site that moves one of the
// other bounds moves this one with it in its config.
//
// The metric is busbw, not time: it is the column users read for these sizes
// in the nccl-tests table (the "algbw / busbw" plateau they tune for), it is
// comparable across the band's sizes (time grows 256-fold over it, busbw only
// a few-fold) and the finding then reads like busbw_regression's. For one
// size, busbw = size x factor / time, so a relative change is the same test
// either way (a 5% drop in busbw is a 5.3% rise in time); only the wording
// differs. A latency rise moves this band too (time = latency + size /
// bandwidth: +10% latency is -8% busbw at 2 MiB on 8 nodes), as it should: it
// is a mid-size busbw loss a user would see.
//
// Stricter than its neighbours, measured (BENCHMARKS.md, "A medium message
// band"): its figure carries both neighbours' noise (at 128 KiB .. 2 MiB the
// time is mostly the latency, at 8 .. 32 MiB mostly size / bandwidth), so a
// night a neighbour's job slows every series a few percent moves it as far as
// either band, and it is a third look at the same runs. Per series the
// two-run rule asks confirm_z 2.5 (a healthy pair's tail P(Z >= 2.5)^2 is 13
// times smaller than at 2) and change points p <= 0.001: on the three-year
// 4096-node healthy history the defaults of busbw_regression raised a 10%
// two-night "drop" (z 2.7, 3.5) and a 7% change-point "improvement" (p
// 0.003) here, these none. Pooled, the one-night and two-night rules stay and
// the CUSUM is off: with it a healthy socket-cluster history (seed 10, night
// 18: an outlier night after a slow drift) raised a pooled false alarm that no
// other band raised; without it a 3% mid-size shift is found within 2 nights
// in 20/30 instead of 22/30.
//
// Oversubscribed runs (more ranks than CPUs on a machine) are left out as
// latency_regression leaves them out: at the band's lower end the time is
// still mostly the per-message latency, which is then the scheduler's.
#include "analyzer/series_regression.h"

namespace fabtrack::analyzer::midsize_busbw_regression_detector {
namespace {

const SeriesRegressionSpec& Spec() {
  static const SeriesRegressionSpec spec{.kind = "midsize_busbw_regression",
                                         .metric_label = "busbw",
                                         .metric_field = "busbw_gbps",
                                         .unit = "GB/s",
                                         .metric = &ResultPoint::busbw_gbps,
                                         .higher_is_better = true,
                                         .band = SeriesRegressionSpec::Band::kMedium,
                                         .band_key = "above_size_bytes",
                                         .band_upper_key = "below_size_bytes",
                                         .skip_oversubscribed = true,
                                         .band_bytes = 64.0 * 1024,
                                         .band_upper_bytes = 64.0 * 1024 * 1024,
                                         .confirm_z = 2.5,
                                         .max_pvalue = 0.001,
                                         .pooled_cusum_arl = 0};
  return spec;
}

const DetectorRegistrar kRegistered(SeriesRegressionDetector<Spec>(
    "bus bandwidth of a series fell over the medium-message band, between the latency and the "
    "large-message bands (warning; improvements as info)"));

}  // namespace
}  // namespace fabtrack::analyzer::midsize_busbw_regression_detector
