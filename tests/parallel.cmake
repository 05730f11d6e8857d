# parallel.cmake - the op modules of parallel_test (pd_parallel_for from C and from C++).
# Every gtest case runs in a process of its own, so each case sets PDEXT_NUM_THREADS itself
# before its first loop starts the pool.
pd_add_test_module(rt_parallel_c ops/parallel_ops.c)
pd_add_test_module(rt_parallel_cc ops/parallel_ops.cc)
target_link_libraries(rt_parallel_c PRIVATE Threads::Threads)
if(TARGET parallel_test)
  add_dependencies(parallel_test rt_parallel_c rt_parallel_cc rt_example_relu)
endif()
