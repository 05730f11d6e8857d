# binder_test: the runner's one binder, its fast cases counted through the internal
# pd__runner_stats (hidden in libpdext.so, so the program links the static library), on the
# ops of bd_binder_ops.
pd_add_test_module(bd_binder_ops ops/binder_ops.c)
add_executable(binder_test internal/binder_test.c)
target_include_directories(binder_test PRIVATE ${CMAKE_SOURCE_DIR}/sdk/src
                                               ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(binder_test PRIVATE pd_test_harness pdext_jit_static)
target_compile_options(binder_test PRIVATE ${PDEXT_WARNINGS})
add_dependencies(binder_test bd_binder_ops)
gtest_discover_tests(binder_test DISCOVERY_MODE PRE_TEST PROPERTIES ENVIRONMENT "PDEXT_TEST=1")
