// A run's regression or port finding and the uplinks that errored or
// congested during the same run (the run_fabric detector's findings on
// switch-to-switch cables): each such finding gets them as evidence
// ("fabric_uplinks", both ends of each) and a sentence naming them, so the
// reader sees the fabric's side of the run beside its symptom. Pure.
#pragma once

#include <vector>

#include "core/finding.h"

namespace fabtrack::fabric_analysis {

void CiteRunUplinks(std::vector<Finding>* findings);

}  // namespace fabtrack::fabric_analysis
