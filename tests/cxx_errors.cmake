# Modules of the C++ error tests (cxx_errors_test): a C++ module whose kernels hold RAII
# objects and fail in every way C++ code can, and a mixed C/C++ module linked in both orders
# (the weak info block of either unit must name the C++ invoke hook).
pd_add_test_module(cx_errors_ops cxx_ops/cxx_errors_ops.cc)
pd_add_test_module(cx_mixed_c_first cxx_ops/mixed_c.c cxx_ops/mixed_cxx.cc)
pd_add_test_module(cx_mixed_cxx_first cxx_ops/mixed_cxx.cc cxx_ops/mixed_c.c)
foreach(m cx_errors_ops cx_mixed_c_first cx_mixed_cxx_first)
  set_target_properties(${m} PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON)
endforeach()

find_package(Threads REQUIRED)

if(TARGET cxx_errors_test)
  add_dependencies(cxx_errors_test cx_errors_ops cx_mixed_c_first cx_mixed_cxx_first
                   rt_errors_ops)
  target_link_libraries(cxx_errors_test PRIVATE ${CMAKE_DL_LIBS} Threads::Threads)
  # A C++ op linked into the test program itself (pd_register_linked_ops).
  target_sources(cxx_errors_test PRIVATE ${CMAKE_CURRENT_LIST_DIR}/cxx_ops/linked_ops.cc)
  target_include_directories(cxx_errors_test PRIVATE ${PDEXT_INCLUDE_DIR})
endif()
