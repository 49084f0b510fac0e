#include "analyzer/series_finding.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "analyzer/run_facts.h"
#include "core/text.h"

namespace fabtrack::analyzer::series {

namespace {

std::string HostList(const std::vector<std::string>& hosts) {
  constexpr size_t kShown = 4;
  std::vector<std::string> shown(hosts.begin(), hosts.begin() + std::min(hosts.size(), kShown));
  std::string out = Join(shown, ",");
  if (hosts.size() > kShown) out += " and " + std::to_string(hosts.size() - kShown) + " more";
  return out;
}

nlohmann::json OptionalJson(const std::optional<std::string>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json();
}

// What differs between the run before a change point and the run at it.
nlohmann::json WhatChanged(const RunView& before, const RunView& after, std::string* summary) {
  nlohmann::json out = nlohmann::json::object();
  std::vector<std::string> parts;
  if (before.nccl_version != after.nccl_version) {
    out["nccl_version"] = {{"before", OptionalJson(before.nccl_version)},
                           {"after", OptionalJson(after.nccl_version)}};
    parts.push_back("NCCL " + before.nccl_version.value_or("?") + " → " +
                    after.nccl_version.value_or("?"));
  }
  const std::set<std::string> hosts_before(before.hosts.begin(), before.hosts.end());
  const std::set<std::string> hosts_after(after.hosts.begin(), after.hosts.end());
  std::vector<std::string> added, removed;
  std::set_difference(hosts_after.begin(), hosts_after.end(), hosts_before.begin(),
                      hosts_before.end(), std::back_inserter(added));
  std::set_difference(hosts_before.begin(), hosts_before.end(), hosts_after.begin(),
                      hosts_after.end(), std::back_inserter(removed));
  if (!added.empty() || !removed.empty()) {
    out["hosts_added"] = added;
    out["hosts_removed"] = removed;
    std::string hosts = "hosts";
    if (!added.empty()) hosts += " +" + HostList(added);
    if (!removed.empty()) hosts += " -" + HostList(removed);
    parts.push_back(hosts);
  }
  if (before.network != after.network) {
    out["network"] = {{"before", OptionalJson(before.network)},
                      {"after", OptionalJson(after.network)}};
    parts.push_back("network " + before.network.value_or("?") + " → " +
                    after.network.value_or("?"));
  }
  const std::set<std::string> transports_before(before.transports.begin(), before.transports.end());
  const std::set<std::string> transports_after(after.transports.begin(), after.transports.end());
  if (transports_before != transports_after) {
    out["transports"] = {{"before", before.transports}, {"after", after.transports}};
    parts.push_back(
        "transports " +
        Join(std::vector<std::string>(transports_before.begin(), transports_before.end()), ",") +
        " → " +
        Join(std::vector<std::string>(transports_after.begin(), transports_after.end()), ","));
  }
  if (before.gdrdma != after.gdrdma) {
    auto text = [](const std::optional<bool>& g) {
      return g ? std::string(*g ? "on" : "off") : std::string("?");
    };
    out["gdrdma"] = {{"before", before.gdrdma ? nlohmann::json(*before.gdrdma) : nlohmann::json()},
                     {"after", after.gdrdma ? nlohmann::json(*after.gdrdma) : nlohmann::json()}};
    parts.push_back("GDRDMA " + text(before.gdrdma) + " → " + text(after.gdrdma));
  }
  auto version = [&](const char* key, const char* label, const std::optional<std::string>& a,
                     const std::optional<std::string>& b) {
    if (a == b || !a || !b) return;  // a run that did not record it is no change
    out[key] = {{"before", *a}, {"after", *b}};
    parts.push_back(std::string(label) + " " + *a + " → " + *b);
  };
  version("cuda_version", "CUDA", before.cuda_version, after.cuda_version);
  version("driver_version", "driver", before.driver_version, after.driver_version);
  version("net_plugin", "NET plugin", before.net_plugin, after.net_plugin);
  // Map-valued facts entry by entry: NCCL_* and launcher settings, and the
  // nodes' firmware, links, kernel and topology (core/node_facts.h).
  auto entries = [&](const char* key, const std::string& text_a, const std::string& text_b,
                     bool skip_unrecorded) {
    if (text_a == text_b) return;
    const nlohmann::json a = nlohmann::json::parse(text_a, nullptr, false);
    const nlohmann::json b = nlohmann::json::parse(text_b, nullptr, false);
    if (!a.is_object() || !b.is_object()) return;
    // A run stored before its nodes' facts were recorded is no change.
    if (skip_unrecorded && (a.empty() || b.empty())) return;
    nlohmann::json changed = nlohmann::json::object();
    std::set<std::string> names;
    for (const auto& [k, v] : a.items()) names.insert(k);
    for (const auto& [k, v] : b.items()) names.insert(k);
    for (const std::string& name : names) {
      const nlohmann::json va = a.contains(name) ? a[name] : nlohmann::json();
      const nlohmann::json vb = b.contains(name) ? b[name] : nlohmann::json();
      if (va == vb) continue;
      changed[name] = {{"before", va}, {"after", vb}};
      auto shown = [](const nlohmann::json& v) {
        return v.is_string() ? v.get<std::string>() : std::string("unset");
      };
      parts.push_back(name + " " + shown(va) + " → " + shown(vb));
    }
    if (!changed.empty()) out[key] = changed;
  };
  entries("nccl_env", before.nccl_env_json, after.nccl_env_json, false);
  entries("node_facts", before.node_facts_json, after.node_facts_json, true);
  *summary =
      parts.empty()
          ? "no NCCL, CUDA, driver, setting, host, network, GDRDMA, firmware, link, kernel or "
            "topology change recorded"
          : Join(parts, ", ");
  return out;
}

std::string Percent(double fraction) {
  char buf[32];
  const double pct = std::fabs(fraction) * 100;
  std::snprintf(buf, sizeof buf, pct < 10 ? "%.1f%%" : "%.0f%%", pct);
  return buf;
}

std::string Number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, std::fabs(v) < 10 ? "%.2f" : "%.1f", v);
  return buf;
}

std::string BandLabel(const SeriesRegressionSpec& spec, const SeriesTable& t,
                      const std::vector<int>& band, int64_t band_bytes) {
  if (!t.sized) return spec.metric_label;
  // The medium band names the sizes the run had in it ("busbw at 128 KiB–32
  // MiB"): its bounds are exclusive and a run always has sizes inside them.
  if (spec.band == SeriesRegressionSpec::Band::kMedium) {
    return spec.metric_label + " at " + FormatBytes(t.sizes[band.front()]) + "–" +
           FormatBytes(t.sizes[band.back()]);
  }
  const bool largest = spec.band == SeriesRegressionSpec::Band::kLargest;
  const bool in_band =
      largest ? t.sizes[band.front()] >= band_bytes : t.sizes[band.back()] <= band_bytes;
  if (in_band) return spec.metric_label + (largest ? " at ≥" : " at ≤") + FormatBytes(band_bytes);
  return spec.metric_label + " at its " + (largest ? "largest" : "smallest") + " sizes (" +
         FormatBytes(t.sizes[band.front()]) + "–" + FormatBytes(t.sizes[band.back()]) + ")";
}

std::string BandRule(const SeriesRegressionSpec& spec, const Settings& s) {
  switch (spec.band) {
    case SeriesRegressionSpec::Band::kLargest:
      return "sizes >= " + FormatBytes(s.band_bytes) + ", else the largest 25%";
    case SeriesRegressionSpec::Band::kSmallest:
      return "sizes <= " + FormatBytes(s.band_bytes) + ", else the smallest 25%";
    case SeriesRegressionSpec::Band::kMedium:
      return FormatBytes(s.band_bytes) + " < sizes < " + FormatBytes(s.band_upper_bytes);
  }
  return "";
}

}  // namespace

Finding MakeFinding(const SeriesTable& t, const ChangeSeries& c, int i, int direction,
                    const std::optional<RobustResult>& robust,
                    const std::optional<ChangeResult>& change, const Settings& s,
                    const SeriesRegressionSpec& spec) {
  const RunView& run = *t.runs[i];
  const std::vector<int>& band = t.bands[i];
  const bool robust_fired = robust && robust->direction == direction;
  // Tonight's band value in the metric's unit, and the per-size evidence
  // against the robust window (or the change series' reference).
  std::vector<double> tonight_values;
  for (int k : band) tonight_values.push_back(t.At(i, k));
  const double value = *stats::Median(tonight_values);
  std::vector<double> reference_levels;
  for (int k : band) reference_levels.push_back(c.reference[k]);
  const double reference_level = *stats::Median(reference_levels);

  double baseline = 0, shown_change = 0;
  if (robust_fired) {
    baseline = *stats::Median(robust->window.medians);
    shown_change = robust->change;
  } else {
    baseline = change->cp.mean_before * reference_level;
    shown_change = c.values[c.point_of_run[i]] / change->cp.mean_before - 1;
  }

  nlohmann::json sizes = nlohmann::json::array();
  std::optional<int64_t> extreme_size;
  double extreme = -std::numeric_limits<double>::infinity();
  for (int k : band) {
    double size_baseline = c.reference[k];
    if (robust) {
      auto at = std::find(robust->window.sizes.begin(), robust->window.sizes.end(), k);
      if (at != robust->window.sizes.end()) {
        size_baseline = robust->window.medians[at - robust->window.sizes.begin()];
      }
    }
    const double ratio = t.At(i, k) / size_baseline;
    sizes.push_back({{"size_bytes", t.sizes[k]},
                     {"value", t.At(i, k)},
                     {"baseline", size_baseline},
                     {"ratio", ratio}});
    const double how_far = direction * Worse(spec, ratio - 1);
    if (t.sized && how_far > extreme) {
      extreme = how_far;
      extreme_size = t.sizes[k];
    }
  }

  const double worse = Worse(spec, shown_change);
  const bool unconfirmed = direction > 0 && !change && !robust->confirmed;
  // A large drop beyond the noise is worth a look the morning it appears,
  // not two nights later: a warning on its first night, which the next runs
  // confirm (it stays, and may turn critical) or withdraw (it resolves).
  const bool first_night = unconfirmed && robust_fired && s.first_night_magnitude > 0 &&
                           worse >= s.first_night_magnitude;
  Severity severity = Severity::kInfo;
  if (first_night) {
    severity = Severity::kWarning;
  } else if (direction > 0 && !unconfirmed) {
    severity = worse >= s.critical_magnitude ? Severity::kCritical : Severity::kWarning;
  }
  Finding f = FindingForRun(run, t.subject, severity);
  f.kind = spec.kind;
  f.size_bytes = extreme_size;
  f.value = value;
  f.baseline = baseline;
  f.unit = spec.unit;

  std::string verb = "improved";
  if (direction > 0) verb = spec.higher_is_better ? "fell" : "rose";
  f.message = BandLabel(spec, t, band, s.band_bytes) + " " + verb + " " + Percent(shown_change) +
              " (" + Number(baseline) + " → " + Number(value) + " " + spec.unit + ") on " +
              f.subject;
  nlohmann::json evidence = {
      {"metric", spec.metric_field},
      {"direction", direction > 0 ? "regression" : "improvement"},
      {"confirmed", direction > 0 && !unconfirmed},
      {"first_night", first_night},
      {"change", shown_change},
  };
  if (t.sized) {
    evidence["band"] = {{"min_bytes", t.sizes[band.front()]},
                        {"max_bytes", t.sizes[band.back()]},
                        {"rule", BandRule(spec, s)}};
    evidence["sizes"] = std::move(sizes);
  }
  if (robust) {
    const Window& w = robust->window;
    nlohmann::json r = {{"baseline_runs", w.end - w.begin},
                        {"baseline_from_run_id", t.runs[w.begin]->id},
                        {"median_ratio", w.band.median},
                        {"scale", w.band.scale},
                        {"tonight_ratio", robust->ratio},
                        {"change", robust->change},
                        {"z", robust->z},
                        {"flagged", robust_fired},
                        {"rule", RuleName(robust->rule)}};
    if (robust->rule == RobustResult::Rule::kTwoRuns) {
      r["previous_run_id"] = t.runs[i - 1]->id;
      r["previous_change"] = robust->previous_change;
      r["previous_z"] = robust->previous_z;
      r["pair_z"] = robust->pair_z;
    }
    evidence["robust"] = r;
  }
  if (robust_fired) {
    char z[64];
    if (robust->rule == RobustResult::Rule::kTwoRuns) {
      std::snprintf(z, sizeof z, ", two runs in a row (z %.1f, %.1f)", robust->previous_z,
                    robust->z);
    } else {
      std::snprintf(z, sizeof z, " (z %.1f)", robust->z);
    }
    f.message += z;
    f.message += " against the previous " +
                 std::to_string(robust->window.end - robust->window.begin) + " runs";
    if (first_night) {
      f.message += "; first night of a drop of " + Percent(s.first_night_magnitude) +
                   " or more: confirmed or withdrawn by the next runs";
    } else if (unconfirmed) {
      f.message += "; one run so far: a warning if the next run confirms it";
    }
  }
  if (change) {
    const stats::ChangePoint& cp = change->cp;
    const RunView& at = *t.runs[change->run];
    const int point = c.point_of_run[change->run];
    const RunView& before = *t.runs[c.run_of_point[point - 1]];
    std::string what;
    evidence["change_point"] = {{"run_id", at.id},
                                {"started_at", at.started_at_iso},
                                {"mean_before", cp.mean_before * reference_level},
                                {"mean_after", cp.mean_after * reference_level},
                                {"forward_change", cp.forward_change},
                                {"p_value", cp.p_value},
                                {"previous_run_id", before.id}};
    evidence["what_changed"] = WhatChanged(before, at, &what);
    f.message += "; change point " + at.started_at_iso.substr(0, 10) + " (" + what + ")";
  }
  f.evidence = std::move(evidence);
  return f;
}

}  // namespace fabtrack::analyzer::series
