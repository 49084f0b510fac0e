// The analysis for Alertmanager, as a node_exporter textfile-collector file:
// one series per finding (identified by its fingerprint), counts by severity,
// the headline figures of the judged runs, and when the analysis ran.
#pragma once

#include <string>

#include "analyzer/analyze.h"
#include "analyzer/input_index.h"

namespace fabtrack::analyzer {

// `fingerprint_of(kind, subject)` gives each finding's stable id.
template <typename Fingerprint>
std::string PrometheusTextfile(const InputIndex& input, const AnalysisResult& result,
                               double analyzed_at_epoch, Fingerprint fingerprint_of);

std::string PrometheusTextfileImpl(
    const InputIndex& input, const AnalysisResult& result, double analyzed_at_epoch,
    const std::vector<std::string>& fingerprints);  // one per result.findings entry

template <typename Fingerprint>
std::string PrometheusTextfile(const InputIndex& input, const AnalysisResult& result,
                               double analyzed_at_epoch, Fingerprint fingerprint_of) {
  std::vector<std::string> fingerprints;
  for (const Finding& f : result.findings)
    fingerprints.push_back(fingerprint_of(f.kind, f.subject));
  return PrometheusTextfileImpl(input, result, analyzed_at_epoch, fingerprints);
}

}  // namespace fabtrack::analyzer
