fabtrack_test(sweep_plan_test sweep/sweep_plan_test.cc LIBS fabtrack::sweep)
