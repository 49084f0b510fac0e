// The programs a sweep runs, found and checked before anything runs (so
// that a wrong path is a usage error, not a failure on every rank):
// fabtrack-allreduce, nccl-tests' `<collective>_perf`, whether they write -J
// reports, and an NCCL library folder for `sweep --ab nccl-lib=DIR`.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "collector/sweep/sweep_plan.h"

namespace fabtrack::app {

// fabtrack-allreduce beside this binary (installed), or in the build tree.
std::optional<std::string> FindAllreduce();

struct NcclTestsPrograms {
  std::vector<sweep::NcclTestsProgram> programs;  // in run order
  std::string problem;                            // "" when found
};

// The nccl-tests programs of `collectives` (comma-separated names, or
// "all": every one found) in `dir`: `<c>_perf`, or `<c>_perf_mpi` (builds
// with NAME_SUFFIX=_mpi). `problem` names what is wrong: an unknown
// collective, a missing program, no program at all.
NcclTestsPrograms FindNcclTestsPrograms(const std::string& dir, const std::string& collectives);

// Whether the programs write -J reports ("on", "off", or "auto": nccl-tests
// 2.17 and later list --output_file in their usage text, `program -h`). A
// program that cannot be asked is reported on `err`: no.
bool NcclTestsWriteJson(const std::string& mode, const std::string& program, std::ostream& err);

// Why side B could not load NCCL from `dir` (nccl-lib=DIR), or "": the
// folder must exist and hold a readable libnccl.so.2 that is a shared
// library for this machine. Checked on this host before any round runs (the
// ranks' nodes see the same path on a shared or identically built image):
// otherwise every rank would quietly load the default NCCL and the verdict
// would compare a library with itself.
std::string NcclLibraryProblem(const std::string& dir);

}  // namespace fabtrack::app
