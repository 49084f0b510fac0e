// The CPU bracket of `fabtrack sweep` (issue 32 item 3, on unless `--cpu
// off`): every node of a run samples its CPUs (`fabtrack counters cpu`,
// collector/counters/node_cpu) just before and just after the run, through
// the run's launcher like the port bracket (or this host read directly for a
// local sweep), and each node's window (core/node_cpu.h) is attached to the
// run's batch and stored with it (schema 023). Over sockets or MPI over TCP
// the CPU is in the data path: the analyzer (cpu_bound) names the nodes that
// were busy with other work instead of blaming the fabric.
#pragma once

#include <memory>
#include <ostream>

#include "app/sweep_flow.h"

namespace fabtrack::app {

// A node whose sample is missing or unreadable is said on `err` and the run
// is stored without its window.
std::shared_ptr<RunBracket> MakeCpuBracket(std::ostream& err);

}  // namespace fabtrack::app
