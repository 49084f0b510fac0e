# Included from tests/CMakeLists.txt. The GPU bundle (scripts/gpu-bundle.sh)
# made from this build runs the harness as an MPI singleton with the system's
# Open MPI, libpq, libpqxx and every other library the bundle carries hidden
# (a private mount namespace): what the lent GPU machine, which has none of
# them, will do. It takes this build's binaries (--from-build) and skips
# nccl-tests (--no-peer): no compiler runs, about 15 s, so it stays in the
# normal suite; `ctest -L gpu_bundle` runs it alone.
add_test(NAME gpu_bundle_singleton
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/gpu/bundle_singleton_test.sh ${PROJECT_SOURCE_DIR}
          ${PROJECT_BINARY_DIR})
set_tests_properties(gpu_bundle_singleton PROPERTIES TIMEOUT 300 LABELS gpu_bundle)
