# One precompiled header for the production libraries and programs (issue 33:
# the demo's fresh build of fabtrack and fabtrack-allreduce; numbers in
# BENCHMARKS.md, "Fresh build CPU", round six). Every unity unit of those
# targets parses the same standard library headers and nlohmann/json (~4-5
# CPU-s each, ~35 units); loading them precompiled costs about half of that.
# The header is built once, by fabtrack_pch, and reused by every target
# (REUSE_FROM) -- their flags differ only in -O2/-O3 and in definitions that
# the header does not use, which GCC accepts (-Winvalid-pch, on with CMake's
# precompiled headers, says when it does not).
#
# Off where it would cost more than it saves: under ccache (ccache does not
# cache a compile that uses a precompiled header unless its sloppiness is set
# for it, so every compile would miss: the cache is what makes those builds
# fast), and for compilers other than GCC (the fuzzing build's clang).
# -DFABTRACK_PCH=OFF compiles without it; the include lists of the sources do
# not rely on it (a build with it off is a check of that).
set(fabtrack_pch_default ON)
if(CMAKE_CXX_COMPILER_LAUNCHER MATCHES "ccache" OR NOT CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  set(fabtrack_pch_default OFF)
endif()
option(FABTRACK_PCH "Precompile the standard library and nlohmann/json for the production targets"
       ${fabtrack_pch_default})
message(STATUS "fabtrack: precompiled header ${FABTRACK_PCH}")

# The standard headers included by more than ~10 of the production sources,
# and nlohmann/json through core/json_instances.h (its extern templates must
# come with it). Not libpqxx or CLI11: a handful of units include them, fewer
# than pay for a second header.
set(fabtrack_pch_headers
  <algorithm> <array> <cerrno> <charconv> <chrono> <cmath> <cstddef> <cstdint> <cstdio>
  <cstdlib> <cstring> <filesystem> <fstream> <functional> <iostream> <limits> <map> <memory>
  <optional> <ostream> <set> <sstream> <stdexcept> <string> <string_view> <tuple>
  <unordered_map> <utility> <vector>
  "${PROJECT_SOURCE_DIR}/core/json_instances.h")

# fabtrack_reuse_pch(<dir>...): every C++ library and program defined in these
# directories (and their subdirectories) reuses fabtrack_pch's header.
function(fabtrack_reuse_pch)
  if(NOT FABTRACK_PCH)
    return()
  endif()
  if(NOT TARGET fabtrack_pch)
    add_library(fabtrack_pch OBJECT "${PROJECT_SOURCE_DIR}/cmake/pch_owner.cc")
    target_include_directories(fabtrack_pch PRIVATE ${PROJECT_SOURCE_DIR})
    target_link_libraries(fabtrack_pch PRIVATE nlohmann_json::nlohmann_json)
    target_precompile_headers(fabtrack_pch PRIVATE ${fabtrack_pch_headers})
  endif()
  set(dirs ${ARGN})
  while(dirs)
    list(POP_FRONT dirs dir)
    get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
    list(APPEND dirs ${subdirs})
    get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
    foreach(target IN LISTS targets)
      get_target_property(type ${target} TYPE)
      if(type MATCHES "^(STATIC_LIBRARY|SHARED_LIBRARY|OBJECT_LIBRARY|EXECUTABLE)$")
        target_precompile_headers(${target} REUSE_FROM fabtrack_pch)
      endif()
    endforeach()
  endwhile()
endfunction()
