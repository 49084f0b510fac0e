// The finding of a series regression (analyzer/series_regression.h): its
// summary, severity and evidence, from what the checks found. Internal to the
// series-regression detectors.
#pragma once

#include <optional>

#include "analyzer/series_checks.h"
#include "core/finding.h"

namespace fabtrack::analyzer::series {

// The finding on run i of `t` for a move in `direction` (+1 worse, -1 better),
// from what the robust and the change-point checks found.
Finding MakeFinding(const SeriesTable& t, const ChangeSeries& c, int i, int direction,
                    const std::optional<RobustResult>& robust,
                    const std::optional<ChangeResult>& change, const Settings& s,
                    const SeriesRegressionSpec& spec);

}  // namespace fabtrack::analyzer::series
