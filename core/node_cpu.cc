#include "core/node_cpu.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "core/text.h"

namespace fabtrack {

std::optional<NodeCpuWindow> CutNodeCpuWindow(const NodeCpuSample& before,
                                              const NodeCpuSample& after, std::string* why) {
  if (before.host != after.host) {
    *why = "samples of two hosts (" + before.host + ", " + after.host + ")";
    return std::nullopt;
  }
  if (before.cpus != after.cpus || before.cpus <= 0 || after.ticks_per_second <= 0) {
    *why = before.host + ": CPUs changed inside the window (" + std::to_string(before.cpus) +
           " -> " + std::to_string(after.cpus) + ")";
    return std::nullopt;
  }
  const int64_t total = after.times.Total() - before.times.Total();
  if (total <= 0 || after.times.idle < before.times.idle) {
    *why = before.host + ": /proc/stat went backwards (a reboot inside the window?)";
    return std::nullopt;
  }
  NodeCpuWindow w;
  w.host = after.host;
  w.cpus = after.cpus;
  const double hz = static_cast<double>(after.ticks_per_second);
  // All CPUs' ticks over the window: the window's length times the CPUs.
  w.seconds = static_cast<double>(total) / hz / after.cpus;
  const int64_t idle =
      (after.times.idle + after.times.iowait) - (before.times.idle + before.times.iowait);
  w.busy_fraction = std::clamp(1.0 - static_cast<double>(idle) / total, 0.0, 1.0);
  w.steal_fraction =
      std::clamp(static_cast<double>(after.times.steal - before.times.steal) / total, 0.0, 1.0);
  w.load1_before = before.load.load1;
  w.load1_after = after.load.load1;
  std::map<std::pair<int, int64_t>, int64_t> ticks_before;
  for (const ProcessCpu& p : before.processes) ticks_before[{p.pid, p.start_ticks}] = p.cpu_ticks;
  // Per command name: a pool of workers is one piece of other work.
  std::map<std::string, int64_t> by_comm;
  int64_t other = 0;
  for (const ProcessCpu& p : after.processes) {
    auto it = ticks_before.find({p.pid, p.start_ticks});
    const int64_t grew = it == ticks_before.end() ? p.cpu_ticks : p.cpu_ticks - it->second;
    if (grew <= 0) continue;
    other += grew;
    by_comm[p.comm] += grew;
  }
  w.other_cpus = w.seconds > 0 ? static_cast<double>(other) / hz / w.seconds : 0;
  std::vector<OtherProcess> others;
  for (const auto& [comm, ticks] : by_comm) {
    others.push_back({comm, static_cast<double>(ticks) / hz});
  }
  std::sort(others.begin(), others.end(), [](const OtherProcess& a, const OtherProcess& b) {
    return a.cpu_seconds != b.cpu_seconds ? a.cpu_seconds > b.cpu_seconds : a.comm < b.comm;
  });
  if (others.size() > 3) others.resize(3);
  w.top_others = std::move(others);
  return w;
}

bool NodeCpuBusy(const NodeCpuWindow& window, const CpuBusyThresholds& t) {
  const double other_floor = std::max(t.other_min_cpus, t.other_share * window.cpus);
  return window.other_cpus >= other_floor || window.steal_fraction >= t.steal_fraction;
}

std::string DescribeNodeCpu(const NodeCpuWindow& w) {
  std::string text =
      FormatFixed(w.other_cpus, 1) + " of " + std::to_string(w.cpus) + " CPUs on other work";
  if (!w.top_others.empty()) {
    text += " (";
    for (size_t i = 0; i < w.top_others.size(); ++i) {
      text += (i ? ", " : "") + w.top_others[i].comm + " " +
              FormatFixed(w.top_others[i].cpu_seconds, 1) + " CPU-s";
    }
    text += ")";
  }
  if (w.steal_fraction >= 0.005) text += ", " + FormatFixed(100 * w.steal_fraction, 0) + "% stolen";
  text += ", load " + FormatFixed(w.load1_before, 1) + " -> " + FormatFixed(w.load1_after, 1) +
          " over " + FormatFixed(w.seconds, 0) + " s";
  return text;
}

nlohmann::json NodeCpuSampleToJson(const NodeCpuSample& s) {
  nlohmann::json processes = nlohmann::json::array();
  for (const ProcessCpu& p : s.processes) {
    processes.push_back({p.pid, p.start_ticks, p.comm, p.cpu_ticks});
  }
  return {{"host", s.host},
          {"taken_at", s.taken_at},
          {"cpus", s.cpus},
          {"ticks_per_second", s.ticks_per_second},
          {"times",
           {{"user", s.times.user},
            {"nice", s.times.nice},
            {"system", s.times.system},
            {"idle", s.times.idle},
            {"iowait", s.times.iowait},
            {"irq", s.times.irq},
            {"softirq", s.times.softirq},
            {"steal", s.times.steal}}},
          {"load",
           {{"load1", s.load.load1},
            {"load5", s.load.load5},
            {"load15", s.load.load15},
            {"runnable", s.load.runnable},
            {"threads", s.load.threads}}},
          {"processes", std::move(processes)}};
}

std::optional<NodeCpuSample> NodeCpuSampleFromJson(const nlohmann::json& doc, std::string* why) {
  if (!doc.is_object()) {
    *why = "not an object";
    return std::nullopt;
  }
  NodeCpuSample s;
  try {
    s.host = doc.at("host").get<std::string>();
    s.taken_at = doc.value("taken_at", "");
    s.cpus = doc.at("cpus").get<int>();
    s.ticks_per_second = doc.value("ticks_per_second", int64_t{100});
    const nlohmann::json& t = doc.at("times");
    s.times = {t.at("user").get<int64_t>(),    t.at("nice").get<int64_t>(),
               t.at("system").get<int64_t>(),  t.at("idle").get<int64_t>(),
               t.at("iowait").get<int64_t>(),  t.at("irq").get<int64_t>(),
               t.at("softirq").get<int64_t>(), t.at("steal").get<int64_t>()};
    const nlohmann::json& l = doc.at("load");
    s.load = {l.at("load1").get<double>(), l.at("load5").get<double>(),
              l.at("load15").get<double>(), l.at("runnable").get<int>(),
              l.at("threads").get<int>()};
    for (const nlohmann::json& p : doc.at("processes")) {
      s.processes.push_back({p.at(0).get<int>(), p.at(1).get<int64_t>(), p.at(2).get<std::string>(),
                             p.at(3).get<int64_t>()});
    }
  } catch (const nlohmann::json::exception& e) {
    *why = e.what();
    return std::nullopt;
  }
  return s;
}

nlohmann::json NodeCpuWindowToJson(const NodeCpuWindow& w) {
  nlohmann::json top = nlohmann::json::array();
  for (const OtherProcess& p : w.top_others) {
    top.push_back({{"comm", p.comm}, {"cpu_seconds", p.cpu_seconds}});
  }
  return {{"host", w.host},
          {"seconds", w.seconds},
          {"cpus", w.cpus},
          {"busy_fraction", w.busy_fraction},
          {"steal_fraction", w.steal_fraction},
          {"other_cpus", w.other_cpus},
          {"load1_before", w.load1_before},
          {"load1_after", w.load1_after},
          {"top_others", std::move(top)}};
}

std::optional<NodeCpuWindow> NodeCpuWindowFromJson(const nlohmann::json& doc, std::string* why) {
  if (!doc.is_object()) {
    *why = "not an object";
    return std::nullopt;
  }
  NodeCpuWindow w;
  try {
    w.host = doc.at("host").get<std::string>();
    w.seconds = doc.at("seconds").get<double>();
    w.cpus = doc.at("cpus").get<int>();
    w.busy_fraction = doc.at("busy_fraction").get<double>();
    w.steal_fraction = doc.at("steal_fraction").get<double>();
    w.other_cpus = doc.at("other_cpus").get<double>();
    w.load1_before = doc.at("load1_before").get<double>();
    w.load1_after = doc.at("load1_after").get<double>();
    for (const nlohmann::json& p : doc.value("top_others", nlohmann::json::array())) {
      w.top_others.push_back({p.at("comm").get<std::string>(), p.at("cpu_seconds").get<double>()});
    }
  } catch (const nlohmann::json::exception& e) {
    *why = e.what();
    return std::nullopt;
  }
  return w;
}

}  // namespace fabtrack
