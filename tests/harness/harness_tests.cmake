# Included from tests/CMakeLists.txt (kept apart from tests/harness/CMakeLists.txt).
fabtrack_test(harness_options_test harness/harness_options_test.cc LIBS fabtrack::harness_core)
fabtrack_test(harness_args_test harness/harness_args_test.cc LIBS fabtrack::harness_core)
fabtrack_test(latency_stats_test harness/latency_stats_test.cc LIBS fabtrack::harness_core)
fabtrack_test(table_printer_test harness/table_printer_test.cc
              LIBS fabtrack::harness_core fabtrack::parse)
# Real MPI ranks: mpirun launches fabtrack-allreduce (built with MPI only).
if(FABTRACK_HAVE_MPI)
  fabtrack_test(allreduce_mpi_test harness/allreduce_mpi_test.cc
                LIBS fabtrack::parse nlohmann_json::nlohmann_json DB)
  add_dependencies(allreduce_mpi_test fabtrack-allreduce)
  target_compile_definitions(allreduce_mpi_test PRIVATE
    FABTRACK_ALLREDUCE="$<TARGET_FILE:fabtrack-allreduce>"
    FABTRACK_MPIEXEC="${MPIEXEC_EXECUTABLE}")
endif()
# Built with the NCCL backend: step mode's cuBLAS loader (no GPU needed).
if(TARGET fabtrack_cublas AND TARGET fabtrack-allreduce)
  fabtrack_test(cublas_library_test harness/cublas_library_test.cc LIBS fabtrack_cublas)
  add_dependencies(cublas_library_test fabtrack-allreduce)
  target_compile_definitions(cublas_library_test PRIVATE
    FABTRACK_ALLREDUCE="$<TARGET_FILE:fabtrack-allreduce>")
endif()
fabtrack_test(nccl_support_test harness/nccl_support_test.cc LIBS fabtrack::harness_core)
fabtrack_test(link_probe_test harness/link_probe_test.cc LIBS fabtrack::harness_core)
fabtrack_test(pair_probe_test harness/pair_probe_test.cc LIBS fabtrack::harness_core)
fabtrack_test(machine_placement_test harness/machine_placement_test.cc LIBS fabtrack::harness_core)
fabtrack_test(step_plan_test harness/step_plan_test.cc LIBS fabtrack::harness_core)
fabtrack_test(timing_plan_test harness/timing_plan_test.cc LIBS fabtrack::harness_core)
