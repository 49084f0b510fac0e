# The InfiniBand subnet from the switches' side (issue 31): pure parts on
# hand-built data, then the whole `fabric scan` against ibsim + opensm (each
# test starts its own simulator under its own IBSIM_SOCKNAME, so they run in
# parallel; they skip, exit 77, where ibsim-utils/opensm are not installed).
fabtrack_test(pma_decode_test subnet/pma_decode_test.cc LIBS fabtrack::fabric_plan)
if(FABTRACK_HAVE_IBMAD)
  target_compile_definitions(pma_decode_test PRIVATE FABTRACK_HAVE_IBMAD)
  target_link_libraries(pma_decode_test PRIVATE ${IBMAD_LIBRARY})
endif()
# The discovery walk over directed-route SMPs on subnets held in memory.
fabtrack_test(subnet_smp_walk_test subnet/smp_walk_test.cc LIBS fabtrack::fabric_plan)
fabtrack_test(subnet_scan_json_test subnet/fabric_scan_json_test.cc LIBS fabtrack::fabric_plan)
fabtrack_test(subnet_detectors_test subnet/fabric_detectors_test.cc LIBS fabtrack_analyzer_core)

if(FABTRACK_HAVE_IBMAD)
  foreach(case small unanswered no_subnet prometheus serve discovery outage)
    add_test(NAME ibsim_scan_${case}
      COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/subnet/ibsim_scan_test.py ${PROJECT_SOURCE_DIR}
              $<TARGET_FILE:fabtrack> ${case})
    set_tests_properties(ibsim_scan_${case} PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77)
  endforeach()
  add_test(NAME ibsim_scan_faults
    COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/subnet/ibsim_scan_test.py ${PROJECT_SOURCE_DIR}
            $<TARGET_FILE:fabtrack> faults)
  set_tests_properties(ibsim_scan_faults PROPERTIES TIMEOUT 600 SKIP_RETURN_CODE 77
    FIXTURES_REQUIRED postgres ENVIRONMENT "FABTRACK_TEST_DB=${FABTRACK_TEST_DB}")
endif()
# A sweep run's share of two scans (`sweep --fabric-scan`) and its uplinks
# cited in the run's findings.
fabtrack_test(subnet_run_window_test subnet/run_window_test.cc
  LIBS fabtrack::fabric_plan fabtrack_analyzer_core)
# A real sweep (fabtrack-allreduce over MPI ranks on this host) with
# --fabric-scan on a simulated subnet whose first HCA is this host; faults
# injected into its leaf's uplinks while the run runs.
if(FABTRACK_HAVE_IBMAD AND TARGET fabtrack-allreduce)
  add_test(NAME ibsim_sweep_fabric
    COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/subnet/ibsim_sweep_test.py ${PROJECT_SOURCE_DIR}
            $<TARGET_FILE:fabtrack> $<TARGET_FILE:fabtrack-allreduce>)
  set_tests_properties(ibsim_sweep_fabric PROPERTIES TIMEOUT 600 SKIP_RETURN_CODE 77
    FIXTURES_REQUIRED postgres ENVIRONMENT "FABTRACK_TEST_DB=${FABTRACK_TEST_DB}")
endif()
fabtrack_test(subnet_switch_exposition_test subnet/switch_exposition_test.cc
  LIBS fabtrack::fabric_plan)
