# Included from tests/CMakeLists.txt. The GPU bundle (scripts/gpu-bundle.sh)
# made from this build runs the harness as an MPI singleton with the system's
# Open MPI, libpq and libpqxx hidden (a private mount namespace): what the
# lent GPU machine, which has none of them, will do.
add_test(NAME gpu_bundle_singleton
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/gpu/bundle_singleton_test.sh ${PROJECT_SOURCE_DIR}
          ${PROJECT_BINARY_DIR})
set_tests_properties(gpu_bundle_singleton PROPERTIES TIMEOUT 300)
