fabtrack_test(sysfs_ports_test counters/sysfs_ports_test.cc LIBS fabtrack::counters)
fabtrack_test(counter_deltas_test counters/counter_deltas_test.cc LIBS fabtrack::counters)
fabtrack_test(verbs_ports_test counters/verbs_ports_test.cc LIBS fabtrack::verbs)
