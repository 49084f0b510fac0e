# Grafana dashboards, provisioning and alert rules (dashboards/): every panel's
# SQL expanded as Grafana expands it, run as Grafana's read-only role against
# a private PostgreSQL filled by real sweeps, ingests, port snapshots and
# `fabtrack analyze`; promtool check/test for the Prometheus rules.
add_test(NAME dashboards
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/dashboards/dashboards_test.sh ${PROJECT_SOURCE_DIR}
          $<TARGET_FILE:fabtrack>)
set_tests_properties(dashboards PROPERTIES TIMEOUT 600)
