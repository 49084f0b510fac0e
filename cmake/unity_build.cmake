# Unity builds where a target opts in (issue 33: a fresh build took twice the
# CPU it needs; numbers in BENCHMARKS.md, "Fresh build CPU"). Several sources
# compiled as one unit pay once for what they all include and instantiate;
# CLI11's validator objects alone cost ~10 CPU-s in every unit including it.
#
# A target opts in with UNITY_BUILD_MODE GROUP and a UNITY_GROUP per source
# (cli/CMakeLists.txt): files whose anonymous-namespace helpers share a name
# go in different groups, and a source in no group, such as a newly added one,
# is compiled on its own as before, so an addition cannot break the build.
#
# On everywhere, ccache builds included, so that a helper added to a grouped
# file that clashes with one in its group fails in the build of whoever adds
# it, not first in CI. -DFABTRACK_UNITY=OFF compiles every file alone.

# Precompiled headers were measured and left out, twice: with GCC 12, loading
# a precompiled standard library + nlohmann/json (100 MB) cost small units
# ~1.5-3 CPU-s more than parsing what they include, and saved the unity units
# ~1 CPU-s each (their time is instantiation and code generation): about
# even, with the header's own 10 CPU-s (BENCHMARKS.md, round six).
option(FABTRACK_UNITY "Compile the opted-in targets' sources in unity groups" ON)
message(STATUS "fabtrack: unity groups ${FABTRACK_UNITY}")

# fabtrack_unity_group(<target> <group> <source>...): compile these sources of
# <target> as one unity unit named <group> (when FABTRACK_UNITY is on). Call it
# from the directory that adds the sources; several calls make several groups.
function(fabtrack_unity_group target group)
  if(NOT FABTRACK_UNITY)
    return()
  endif()
  set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_MODE GROUP)
  set_source_files_properties(${ARGN} PROPERTIES UNITY_GROUP ${group})
endfunction()
