// The words NCCL prints for transports and networks. A log value outside
// these lists is a cut line, two lines run together or a plugin fabtrack does
// not know yet: the parsers report it as unknown instead of storing it, so a
// "P2" cut from "P2P/IPC" never becomes a transport.
#pragma once

#include <string_view>

namespace fabtrack {

// Network names of "Using network X", "Assigned NET plugin X to comm" and
// channel lines ("via NET/X/0"): IB, Socket, IBext, IBext_v8, AWS Libfabric,
// gIB, GPUDirectTCPX_v7, UCX, ... A plugin's "_vN" suffix is accepted on any
// known name.
bool IsKnownNetName(std::string_view name);

// CollNet names of "via COLLNET/X/0": SHARP.
bool IsKnownCollNetName(std::string_view name);

// What follows the NIC index of a NET/COLLNET channel: GDRDMA, 2.28's
// GDRDMA(PCI), Shared.
bool IsKnownNetFlag(std::string_view flag);

// The kind after "P2P/": IPC, CUMEM, MNNVL, direct pointer, common device,
// indirect.
bool IsKnownP2pKind(std::string_view kind);

// Flags after a P2P kind: read, CE.
bool IsKnownP2pFlag(std::string_view flag);

// Each side of "SHM/direct/direct", "SHM/CE/direct".
bool IsKnownShmMode(std::string_view mode);

// A dotted version of digits: "2.19.3", "12.3".
bool IsDottedVersion(std::string_view text);

}  // namespace fabtrack
