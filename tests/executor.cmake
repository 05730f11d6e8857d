# The executor suites (executor_test, executor_inline_test, executor_device_test): their op
# modules, the simulated device's ops and library.
pd_add_test_module(ex_ops ops/exec_ops.c)
target_link_libraries(executor_test PRIVATE pdext_sim Threads::Threads)
add_dependencies(executor_test ex_ops ds_sim_ops)
target_link_libraries(executor_inline_test PRIVATE pdext_sim)
add_dependencies(executor_inline_test ex_ops ds_sim_ops)
# The executor on the simulated device (executor_device_test): its streams, the device cache.
target_link_libraries(executor_device_test PRIVATE pdext_sim)
add_dependencies(executor_device_test ds_sim_ops)
# The pipeline example host (examples/pipeline/pipeline.c) against the relu example module.
add_executable(ex_pipeline_host ${CMAKE_SOURCE_DIR}/examples/pipeline/pipeline.c)
target_link_libraries(ex_pipeline_host PRIVATE pdext)
target_compile_options(ex_pipeline_host PRIVATE ${PDEXT_C_WARNINGS})
add_dependencies(ex_pipeline_host rt_example_relu)
add_test(NAME Examples.PipelineHostChecksPass
         COMMAND ex_pipeline_host ${CMAKE_CURRENT_BINARY_DIR}/rt_example_relu.so)
target_link_libraries(executor_where_test PRIVATE Threads::Threads)
add_dependencies(executor_where_test ex_ops)
