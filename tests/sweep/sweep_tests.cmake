fabtrack_test(sweep_plan_test sweep/sweep_plan_test.cc LIBS fabtrack::sweep)
fabtrack_test(run_clock_test sweep/run_clock_test.cc LIBS fabtrack::core)
