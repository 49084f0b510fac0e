// Reads every RDMA port (InfiniBand, RoCE, iWARP) from a sysfs tree:
// <root>/class/infiniband/<dev>/{node_guid,fw_ver,board_id} and
// <root>/class/infiniband/<dev>/ports/<n>/{state,phys_state,rate,link_layer,lid,
// counters/,counters_ext/,hw_counters/,gid_attrs/ndevs/0}. Pure: no library
// beyond the C++ standard library and POSIX reads; the root is a parameter so
// tests point it at a fake tree.
#pragma once

#include <string>

#include "core/port_sample.h"

namespace fabtrack {

// Reads every port under <sysfs_root>/class/infiniband, sorted by device
// (natural order: mlx5_2 before mlx5_10) then port number. Never fails:
//  - a counter that reads "N/A (no PMA)", is empty, unparseable, missing or
//    fails to read (EINVAL, EIO, EACCES, ...) is absent from the maps;
//  - a device or port that disappears while it is read (hot unplug, driver
//    reload) is skipped and named in `problems`;
//  - no class/infiniband at all gives no ports and one problem.
// `host` is left empty: the caller fills it.
HostPorts ReadSysfsPorts(const std::string& sysfs_root);

// ReadSysfsPorts for repeated sampling (the exporter's scrapes, `counters
// watch`): the first sample walks the tree and keeps a file descriptor open
// for every counter, state and rate file; later samples pread(2) them into
// the kept HostPorts in place — one syscall per value, no directory walk, no
// heap allocation. Any surprise — a read failing, a value no longer a number
// ("N/A"), a legacy counter at its maximum (saturation), a tree that had
// problems — and every `rediscover_after_s` seconds (new devices), the sample
// is a full ReadSysfsPorts again, so the result always equals it.
class SysfsPortSampler {
 public:
  explicit SysfsPortSampler(std::string sysfs_root, double rediscover_after_s = 60);
  ~SysfsPortSampler();
  SysfsPortSampler(const SysfsPortSampler&) = delete;
  SysfsPortSampler& operator=(const SysfsPortSampler&) = delete;

  const HostPorts& Sample();
  // Samples that walked the whole tree (tests, diagnostics).
  size_t full_reads() const { return full_reads_; }

 private:
  struct CounterFd {
    int fd;
    uint64_t* value;      // a node of the kept HostPorts' maps (stable)
    uint64_t legacy_max;  // 0: not a saturating legacy counter
  };
  struct PortFds {
    size_t index;  // into host_.ports
    int state = -1, phys_state = -1, rate = -1;
    // port_xmit_data / port_rcv_data in host_'s maps (null: absent).
    const uint64_t* xmit_words = nullptr;
    const uint64_t* rcv_words = nullptr;
  };
  void Discover();
  bool FastSample();
  void CloseAll();

  std::string root_;
  double rediscover_after_s_;
  double discovered_at_ = 0;
  bool fast_ = false;
  size_t full_reads_ = 0;
  HostPorts host_;
  std::vector<CounterFd> counters_;
  std::vector<PortFds> ports_;
};

}  // namespace fabtrack
