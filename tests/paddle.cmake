# Modules of the Paddle C++ front tests (paddle_front_test): the examples/paddle ops, the
# every-form module, two modules the loader must refuse, and an op linked into the test.
set(PD_PADDLE_MODULES pp_relu pp_concat pp_forms pp_no_kernel pp_bad_inplace)
pd_add_test_module(pp_relu ${CMAKE_SOURCE_DIR}/examples/paddle/custom_relu_op.cc)
pd_add_test_module(pp_concat ${CMAKE_SOURCE_DIR}/examples/paddle/custom_concat_op.cc)
pd_add_test_module(pp_forms paddle_ops/paddle_forms.cc)
pd_add_test_module(pp_no_kernel paddle_ops/paddle_no_kernel.cc)
pd_add_test_module(pp_bad_inplace paddle_ops/paddle_bad_inplace.cc)
foreach(m ${PD_PADDLE_MODULES})
  set_target_properties(${m} PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON)
endforeach()

if(TARGET paddle_front_test)
  add_dependencies(paddle_front_test ${PD_PADDLE_MODULES})
  target_sources(paddle_front_test PRIVATE ${CMAKE_CURRENT_LIST_DIR}/paddle_ops/paddle_linked.cc)
  target_include_directories(paddle_front_test PRIVATE ${PDEXT_INCLUDE_DIR})
  set_target_properties(paddle_front_test PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON)
  if(TARGET pdext_cmd)
    add_dependencies(paddle_front_test pdext_cmd)
    target_compile_definitions(paddle_front_test PRIVATE PDEXT_CMD="$<TARGET_FILE:pdext_cmd>")
  endif()
endif()

# The unchanged C host example (examples/host/host.c, written for the C relu and concat) runs
# the Paddle-front relu and concat: same op names, same interface, same messages.
add_executable(pp_host ${CMAKE_SOURCE_DIR}/examples/host/host.c)
target_link_libraries(pp_host PRIVATE pdext)
add_dependencies(pp_host pp_relu pp_concat)
add_test(NAME PaddleFront.TheCHostExampleRunsThePaddleBuiltReluAndConcat
         COMMAND pp_host ${CMAKE_CURRENT_BINARY_DIR}/pp_relu.so
                 ${CMAKE_CURRENT_BINARY_DIR}/pp_concat.so)

# paddle/extension.h and the C extension.h in one translation unit: a clear #error, in
# either order.
foreach(order paddle_first c_first)
  add_test(NAME Headers.PaddleAndCExtensionInOneUnitIsAnError_${order}
           COMMAND ${CMAKE_COMMAND} -DCOMPILER=${CMAKE_CXX_COMPILER}
                   "-DFLAGS=-std=c++17 -x c++ -I${PDEXT_INCLUDE_DIR} -DPD_TEST_ORDER_${order}"
                   -DSOURCE=${CMAKE_CURRENT_LIST_DIR}/compile_fail/paddle_and_c_extension.cc
                   -DOUTPUT=${CMAKE_CURRENT_BINARY_DIR}/paddle_and_c_${order}.o
                   "-DEXPECT_ERROR=cannot be included in one translation unit"
                   -P ${CMAKE_CURRENT_LIST_DIR}/compile_fail/expect_compile.cmake)
endforeach()

# The front compiles warning-free as C++20 with -pedantic too (the modules above are C++17).
add_library(pp_forms_cxx20 OBJECT paddle_ops/paddle_forms.cc)
target_include_directories(pp_forms_cxx20 PRIVATE ${PDEXT_INCLUDE_DIR})
target_compile_options(pp_forms_cxx20 PRIVATE ${PDEXT_WARNINGS} -pedantic)
set_target_properties(pp_forms_cxx20 PROPERTIES CXX_STANDARD 20 CXX_STANDARD_REQUIRED ON
                                                CXX_EXTENSIONS OFF POSITION_INDEPENDENT_CODE ON)
