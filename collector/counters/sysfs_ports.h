// Reads every RDMA port (InfiniBand, RoCE, iWARP) from a sysfs tree:
// <root>/class/infiniband/<dev>/{node_guid,fw_ver,board_id} and
// <root>/class/infiniband/<dev>/ports/<n>/{state,phys_state,rate,link_layer,lid,
// counters/,counters_ext/,hw_counters/,gid_attrs/ndevs/0}. Pure: no library
// beyond the C++ standard library and POSIX reads; the root is a parameter so
// tests point it at a fake tree.
#pragma once

#include <dirent.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collector/counters/hw_counter_selection.h"
#include "core/port_sample.h"

namespace fabtrack {

// Reads every port under <sysfs_root>/class/infiniband, sorted by device
// (natural order: mlx5_2 before mlx5_10) then port number. Never fails:
//  - a counter that reads "N/A (no PMA)", is empty, unparseable, missing or
//    fails to read (EINVAL, EIO, EACCES, ...) is absent from the maps;
//  - a device or port that disappears while it is read (hot unplug, driver
//    reload) is skipped and named in `problems`;
//  - no class/infiniband at all gives no ports and one problem.
// `host` is left empty: the caller fills it. hw_counters/ files that `hw`
// does not select are neither opened nor read (none: not the directory either).
HostPorts ReadSysfsPorts(const std::string& sysfs_root, const HwCounterSelection& hw = {});

// The names of the hw_counters/ files of every port under
// <sysfs_root>/class/infiniband (lifespan aside), sorted, each once:
// directory listings only, no file read. What `--hw-counters NAME` is
// checked against.
std::vector<std::string> HwCounterNames(const std::string& sysfs_root);

// This host's kernel release (uname -r), for HostPorts::kernel_release: the
// ports' facts and the kernel they ran under travel together (node facts).
std::optional<std::string> KernelRelease();

// Natural order of sysfs names: runs of digits compare as numbers, leading
// zeros aside (mlx5_2 < mlx5_10); a strict weak order for std::sort.
bool NaturalLess(std::string_view a, std::string_view b);

// How a SysfsPortSampler reads now: the exposition's
// fabtrack_exporter_sampler_* gauges and the one log line per change.
struct SamplerPlan {
  // true: one pread(2) per kept-open file per sample; false: a full
  // ReadSysfsPorts walk every sample until a plan can be made.
  bool fast = false;
  size_t ports = 0;
  size_t files = 0;        // files read per fast sample (state, rate, counters)
  size_t hw_counters = 0;  // of which hw_counters/ files (--hw-counters), watched N/A ones too
  // Legacy counters read at their maximum with no 64-bit source: still read
  // by pread on the fast path and reported in PortSample::saturated.
  size_t saturated = 0;
  // Legacy data/packet counters read from their 64-bit counters_ext/ file.
  size_t widened = 0;
  std::string why;  // one line: which path runs and why

  friend bool operator==(const SamplerPlan&, const SamplerPlan&) = default;
};

// One log line: which path runs, why, and what it reads.
std::string DescribePlan(const SamplerPlan& plan);

// What the sampler did, counted (tests, diagnostics).
struct SamplerStats {
  size_t full_reads = 0;  // samples that walked the whole tree (ReadSysfsPorts)
  size_t opens = 0;       // files the plans opened and kept
  size_t preads = 0;      // values read through kept file descriptors
  size_t plans = 0;       // plans made (discoveries)
};

// ReadSysfsPorts for repeated sampling (the exporter's scrapes, `counters
// watch`): the first sample walks the tree and keeps a file descriptor open
// for every counter, state and rate file (a legacy counter's 64-bit
// counters_ext/ file where one exists); later samples pread(2) them into the
// kept HostPorts in place: one syscall per value, no directory walk, no heap
// allocation. The plan is per counter: a legacy counter stuck at its maximum
// stays on the fast path and is reported in `saturated` (the full walk's
// judgement, made here per counter); only that port's saturated list is
// rebuilt when the set changes. The plan is made again, with a full walk,
// when the tree changes under it: a read failing (ENODEV/ESTALE after a
// driver reload or hot unplug), a value no longer a number ("N/A") or an
// absent one ("N/A", unreadable: kept open too) a number again, a device
// appearing in or leaving class/infiniband (checked every sample: one
// directory read), a tree that had problems, and every `rediscover_after_s`
// seconds. So the result always equals a fresh ReadSysfsPorts(root, hw): the
// selection holds across every new plan (hot plug, driver reload).
inline constexpr double kSamplerRediscoverAfterSeconds = 60;
class SysfsPortSampler {
 public:
  explicit SysfsPortSampler(std::string sysfs_root,
                            double rediscover_after_s = kSamplerRediscoverAfterSeconds,
                            HwCounterSelection hw = {});
  ~SysfsPortSampler();
  SysfsPortSampler(const SysfsPortSampler&) = delete;
  SysfsPortSampler& operator=(const SysfsPortSampler&) = delete;

  const HostPorts& Sample();
  const SamplerPlan& plan() const { return plan_; }
  const SamplerStats& stats() const { return stats_; }
  size_t full_reads() const { return stats_.full_reads; }
  // Called with the new plan whenever a new plan differs from the last one
  // (the caller logs `why`).
  void OnPlanChange(std::function<void(const SamplerPlan&)> f) { on_plan_change_ = std::move(f); }

 private:
  struct CounterFd {
    int fd;
    uint64_t* value;         // a node of the kept HostPorts' maps (stable)
    uint64_t saturates_at;   // a legacy counter's maximum, else 2^64-1
    const std::string* key;  // the map key (for `saturated`)
    bool saturated;
  };
  struct PortFds {
    size_t index;  // into host_.ports
    int state = -1, phys_state = -1, rate = -1;
    // port_xmit_data / port_rcv_data in host_'s maps (null: absent).
    const uint64_t* xmit_words = nullptr;
    const uint64_t* rcv_words = nullptr;
    size_t counters_begin = 0, counters_end = 0;  // range of counters_
  };
  void Discover(const char* reason);
  bool FastSample(const char** reason);
  bool TreeUnchanged();
  void CloseAll();

  std::string root_;
  double rediscover_after_s_;
  HwCounterSelection hw_;
  double discovered_at_ = 0;
  bool fast_ = false;
  SamplerPlan plan_;
  SamplerStats stats_;
  std::function<void(const SamplerPlan&)> on_plan_change_;
  HostPorts host_;
  std::vector<CounterFd> counters_;
  std::vector<PortFds> ports_;
  // Counter files absent from the maps (N/A, unreadable), watched.
  std::vector<int> absent_fds_;
  // class/infiniband, kept open: its entries at planning time.
  DIR* class_dir_ = nullptr;
  std::vector<std::string> devices_;
};

}  // namespace fabtrack
