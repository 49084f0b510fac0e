fabtrack_test(sysfs_ports_test counters/sysfs_ports_test.cc LIBS fabtrack::counters)
fabtrack_test(counter_deltas_test counters/counter_deltas_test.cc LIBS fabtrack::counters)
fabtrack_test(port_sample_json_test counters/port_sample_json_test.cc LIBS fabtrack::counters)
fabtrack_test(sysfs_node_facts_test counters/sysfs_node_facts_test.cc LIBS fabtrack::counters)
fabtrack_test(hw_counter_selection_test counters/hw_counter_selection_test.cc LIBS fabtrack::counters)
fabtrack_test(sysfs_port_sampler_test counters/sysfs_port_sampler_test.cc LIBS fabtrack::counters)
fabtrack_test(verbs_ports_test counters/verbs_ports_test.cc LIBS fabtrack::verbs)
fabtrack_test(ethtool_stats_test counters/ethtool_stats_test.cc LIBS fabtrack::verbs)
add_test(NAME ethtool_netns
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/counters/ethtool_netns_test.sh $<TARGET_FILE:fabtrack>)
add_test(NAME exporter_golden_and_scrape
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/counters/exporter_test.sh $<TARGET_FILE:fabtrack>
          ${CMAKE_CURRENT_SOURCE_DIR}/fixtures)
# --web.config.file: a real Prometheus scraping over TLS with basic auth.
add_test(NAME exporter_tls
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/counters/exporter_tls_test.sh $<TARGET_FILE:fabtrack>
          ${CMAKE_CURRENT_SOURCE_DIR}/fixtures)
add_test(NAME exporter_hw_counters
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/counters/exporter_hw_counters_test.sh $<TARGET_FILE:fabtrack>
          ${CMAKE_CURRENT_SOURCE_DIR}/fixtures)
# prometheus-cpp's serializer is the reference the exporter's text must match.
find_package(prometheus-cpp CONFIG REQUIRED)
fabtrack_test(port_exposition_test counters/port_exposition_test.cc
  LIBS fabtrack::counters prometheus-cpp::core)
fabtrack_test(metrics_http_server_test counters/metrics_http_server_test.cc
  LIBS fabtrack::metrics_http fabtrack::counters fabtrack_test_support Threads::Threads)
fabtrack_test(web_config_test counters/web_config_test.cc LIBS fabtrack::metrics_http)
