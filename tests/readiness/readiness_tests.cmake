# `fabtrack check node` on the fake hosts of fixtures/node/generate.sh.
fabtrack_test(pci_topology_test readiness/pci_topology_test.cc LIBS fabtrack::readiness)
fabtrack_test(node_readiness_test readiness/node_readiness_test.cc LIBS fabtrack::readiness)
fabtrack_test(check_node_cli_test readiness/check_node_cli_test.cc
  LIBS fabtrack_test_support nlohmann_json::nlohmann_json)
add_dependencies(check_node_cli_test fabtrack)
add_test(NAME slurm_node_check_hook
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/readiness/slurm_node_check_test.sh ${PROJECT_SOURCE_DIR}
          $<TARGET_FILE:fabtrack>)
