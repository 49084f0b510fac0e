// Who and where this process is, for the sweep's brackets: the local host's
// name (a local sweep's runs name no host) and this binary's path (the
// brackets launch `fabtrack counters ...` on every node with the same binary).
#pragma once

#include <string>

namespace fabtrack::app {

std::string LocalHostname();

// /proc/self/exe, or "fabtrack" (found on PATH) where it cannot be read.
std::string SelfPath();

}  // namespace fabtrack::app
