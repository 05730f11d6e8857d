# Modules of the runner tests (runner_test, errors_test, dispatch_test, examples_test,
# threads_test). Each is built like an author builds one: sources + SDK headers, no libpdext.
pd_add_test_module(rt_runner_ops ops/runner_ops.c)
pd_add_test_module(rt_errors_ops ops/errors_ops.c)
pd_add_test_module(rt_dispatch_c ops/dispatch_ops.c)
pd_add_test_module(rt_dispatch_cc ops/dispatch_ops.cc)
# The reference examples, straight from examples/ (what an author compiles by hand).
pd_add_test_module(rt_example_relu ${CMAKE_SOURCE_DIR}/examples/relu/relu.c)
pd_add_test_module(rt_example_concat ${CMAKE_SOURCE_DIR}/examples/concat/concat.c)
foreach(m rt_runner_ops rt_errors_ops rt_dispatch_c rt_dispatch_cc rt_example_relu
        rt_example_concat)
  target_compile_options(${m} PRIVATE -O3)
endforeach()

# The tests load these modules, so they must be built first.
foreach(t runner_test infer_only_test errors_test dispatch_test examples_test threads_test
          runner_arrays_test)
  if(TARGET ${t})
    add_dependencies(${t} rt_runner_ops rt_errors_ops rt_dispatch_c rt_dispatch_cc
                     rt_example_relu rt_example_concat)
    target_link_libraries(${t} PRIVATE Threads::Threads)
  endif()
endforeach()
