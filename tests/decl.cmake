# Modules of decl_test (declarations: attr defaults, names, pd_op_*_info) and of the `pdext`
# command tests that check the command shows what the runtime parsed.
pd_add_test_module(td_decl_ops modules/decl_ops.c)
set(PD_DECL_TEST_MODULES td_decl_ops)
foreach(case INT64 INT_RANGE BOOL STRING VECTOR ELEMENT FLOAT STRINGS)
  string(TOLOWER ${case} lower)
  pd_add_test_module(td_bad_${lower} modules/bad_default.c)
  target_compile_definitions(td_bad_${lower} PRIVATE BAD_${case})
  list(APPEND PD_DECL_TEST_MODULES td_bad_${lower})
endforeach()
if(TARGET decl_test)
  add_dependencies(decl_test ${PD_DECL_TEST_MODULES})
endif()
if(TARGET pdext_cli_test)
  add_dependencies(pdext_cli_test td_decl_ops)
endif()

# The parser on its own: hidden in libpdext.so, so this program links the static library.
add_executable(decl_internal_test internal/decl_internal_test.c)
target_include_directories(decl_internal_test PRIVATE ${CMAKE_SOURCE_DIR}/sdk/src)
target_link_libraries(decl_internal_test PRIVATE pd_test_harness pdext_jit_static)
target_compile_options(decl_internal_test PRIVATE ${PDEXT_WARNINGS})
gtest_discover_tests(decl_internal_test DISCOVERY_MODE PRE_TEST
                     PROPERTIES ENVIRONMENT "PDEXT_TEST=1")
