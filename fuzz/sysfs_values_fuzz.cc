// Values read from sysfs (state, phys_state, rate, counters, hw_counters):
// the fuzzer's bytes, split at NULs, become the files of one port of a small
// tree in a temp dir, read by ReadSysfsPorts and by the sampler's fast path.
// Oracle: a counter is present exactly when its file (at most 64 bytes)
// holds a decimal number that fits 64 bits (trailing blanks allowed), with
// that value; both readers agree.
#include <unistd.h>

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "collector/counters/sysfs_ports.h"

namespace {

namespace fs = std::filesystem;

const char* const kFiles[] = {"state",
                              "phys_state",
                              "rate",
                              "link_layer",
                              "lid",
                              "counters/symbol_error",
                              "counters/port_xmit_data",
                              "counters/link_downed",
                              "counters/port_xmit_wait",
                              "hw_counters/np_cnp_sent"};

const fs::path& Root() {
  static const fs::path root = [] {
    fs::path r = fs::temp_directory_path() / ("sysfs-fuzz-" + std::to_string(getpid()));
    fs::create_directories(r / "class/infiniband/mlx5_0/ports/1/counters");
    fs::create_directories(r / "class/infiniband/mlx5_0/ports/1/hw_counters");
    return r;
  }();
  return root;
}

// sysfs counters are short: a file over 64 bytes is not one; trailing
// newlines, blanks and NULs are not part of the value.
std::optional<uint64_t> Expected(std::string v) {
  if (v.size() > 64) return std::nullopt;
  while (!v.empty() && (v.back() == '\n' || v.back() == ' ' || v.back() == '\t' ||
                        v.back() == '\r' || v.back() == '\0')) {
    v.pop_back();
  }
  if (v.empty()) return std::nullopt;
  uint64_t n = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || end != v.data() + v.size()) return std::nullopt;
  return n;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> values(1);
  for (size_t i = 0; i < size && values.size() <= std::size(kFiles); ++i) {
    if (data[i] == 0) {
      values.emplace_back();
    } else {
      values.back().push_back(static_cast<char>(data[i]));
    }
  }
  const fs::path port = Root() / "class/infiniband/mlx5_0/ports/1";
  for (size_t f = 0; f < std::size(kFiles); ++f) {
    const fs::path file = port / kFiles[f];
    if (f < values.size()) {
      std::ofstream(file, std::ios::binary | std::ios::trunc) << values[f].substr(0, 4000);
    } else {
      std::error_code ec;
      fs::remove(file, ec);
    }
  }
  fabtrack::HostPorts full = fabtrack::ReadSysfsPorts(Root().string());
  fabtrack::SysfsPortSampler sampler(Root().string());
  fabtrack::HostPorts fast = sampler.Sample();  // first: a full walk
  fast = sampler.Sample();                      // then the kept-open fast path
  if (full.ports.size() != 1 || fast.ports.size() != 1) __builtin_trap();
  for (size_t f = 5; f < std::size(kFiles); ++f) {
    const std::string name = fs::path(kFiles[f]).filename().string();
    const bool hw = std::string(kFiles[f]).rfind("hw_counters/", 0) == 0;
    const auto want = f < values.size() ? Expected(values[f].substr(0, 4000)) : std::nullopt;
    for (const fabtrack::HostPorts* h : {&full, &fast}) {
      const auto& map = hw ? h->ports[0].hw_counters : h->ports[0].counters;
      auto it = map.find(name);
      const std::optional<uint64_t> got =
          it == map.end() ? std::nullopt : std::optional<uint64_t>(it->second);
      if (got != want) __builtin_trap();
    }
  }
  return 0;
}
