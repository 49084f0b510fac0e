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

}  // namespace fabtrack
