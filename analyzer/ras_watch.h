// The verdict of `fabtrack ras watch` over a job's consecutive RAS snapshots
// (core/ras_snapshot.h). Pure.
//  - stuck (critical): a communicator whose collective counts did not move
//    between the last two snapshots or more while it runs, with its ranks
//    disagreeing (some launched operations that others did not: they wait on
//    those), or every judged communicator of the job frozen at once (hung
//    inside an operation all launched). A communicator frozen alone with its
//    ranks agreeing is idle, not stuck: jobs keep communicators they seldom
//    use. Named as soon as two snapshots agree.
//  - laggard (warning): ranks whose count of some operation is below the
//    highest count of their communicator in each of the last two snapshots
//    (one, when there is only one), however many they are: 1 rank of 100 or
//    60 of 100 (RAS's own report names them only when few).
//  - dead, unresponsive, missing, error (critical): ranks the newest
//    snapshot reports so, since the first snapshot of their unbroken run.
//  - peer_dead (critical, first): processes RAS's event stream declared dead
//    (PEER_DEAD, NCCL >= 2.29), each once, named by host, GPU and pid with
//    the ranks the snapshots give that process, since the event was read:
//    at once, where the status report lists them only after RAS's 60 s.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/ras_event.h"
#include "core/ras_snapshot.h"

namespace fabtrack::analyzer {

// Snapshots in the order taken (oldest first), all of one job; its events
// (RAS's stream) in the order read.
RasWatchVerdict JudgeRasWatch(const std::vector<RasSnapshot>& snapshots,
                              const std::vector<RasEvent>& events = {});

// What the port counters of `host` did over the window: one line per
// counter that rose between two consecutive samples of a port ("mlx5_3
// port 1 link_downed +2 at 2026-12-05T03:12:00Z", the time of the sample
// that saw it), per change of port state ("mlx5_3 port 1 ACTIVE -> DOWN
// at ...") and of link rate ("mlx5_3 port 1 rate 400 -> 200 Gb/s at ...").
// `readings` may hold any hosts and any order; counters that went
// backwards (a reset) are not counted as errors.
std::vector<std::string> PortChangesOf(const std::string& host,
                                       const std::vector<HostPortReading>& readings);

// Adds PortChangesOf for each finding's ranks' hosts (each host once per
// finding, prefixed with "host: ").
void AttachPortChanges(const std::vector<HostPortReading>& readings, RasWatchVerdict* verdict);

}  // namespace fabtrack::analyzer
