# fabtrack_library(<name> SOURCES <source>... [LINK <library>...] [UNITY <group>]):
# the static library fabtrack_<name> of SOURCES, linked PUBLIC with LINK, its
# alias fabtrack::<name>, and with UNITY all its sources compiled as the one
# unity unit <group> (fabtrack_unity_group, cmake/unity_build.cmake). A
# library whose sources go in several unity groups sets them itself.
function(fabtrack_library name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "UNITY" "SOURCES;LINK")
  if(arg_UNPARSED_ARGUMENTS OR NOT arg_SOURCES)
    message(FATAL_ERROR "fabtrack_library(${name}): SOURCES <source>... [LINK <library>...] "
                        "[UNITY <group>], not: ${arg_UNPARSED_ARGUMENTS}")
  endif()
  add_library(fabtrack_${name} STATIC ${arg_SOURCES})
  target_link_libraries(fabtrack_${name} PUBLIC ${arg_LINK})
  add_library(fabtrack::${name} ALIAS fabtrack_${name})
  if(arg_UNITY)
    fabtrack_unity_group(fabtrack_${name} ${arg_UNITY} ${arg_SOURCES})
  endif()
endfunction()
