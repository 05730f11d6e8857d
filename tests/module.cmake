# Modules and settings of the registry / module-loading tests (module_test, registry_test,
# opdef_test). Each module is built like an author builds one: sources + SDK headers, no
# libpdext.
pd_add_test_module(tm_good_ops modules/good_ops.c)
pd_add_test_module(tm_good_cxx modules/good_cxx.cc)
pd_add_test_module(tm_no_ops modules/no_ops.c)
pd_add_test_module(tm_no_entry modules/no_entry.c)
pd_add_test_module(tm_forward_only modules/forward_only.c)
pd_add_test_module(tm_grad_only modules/grad_only.c)

# ABI variants: a newer minor, another major, an older (shorter) info block.
pd_add_test_module(tm_abi_newer_minor modules/abi_variant.c)
target_compile_definitions(tm_abi_newer_minor PRIVATE TEST_ABI_MAJOR=PD_ABI_MAJOR
                                                      "TEST_ABI_MINOR=(PD_ABI_MINOR+1)")
pd_add_test_module(tm_abi_other_major modules/abi_variant.c)
target_compile_definitions(tm_abi_other_major PRIVATE "TEST_ABI_MAJOR=(PD_ABI_MAJOR+1)"
                                                      TEST_ABI_MINOR=0)
pd_add_test_module(tm_abi_short_info modules/abi_variant.c)
target_compile_definitions(tm_abi_short_info PRIVATE TEST_ABI_MAJOR=PD_ABI_MAJOR
                           TEST_ABI_MINOR=PD_ABI_MINOR
                           "TEST_INFO_SIZE=offsetof(pd_module_info,sdk_version)")

# One refused module per REFUSE_* case of modules/refuse.c: tm_refuse_<case in lower case>.
set(PD_MODULE_TEST_MODULES tm_good_ops tm_good_cxx tm_no_ops tm_no_entry tm_forward_only
    tm_grad_only tm_abi_newer_minor tm_abi_other_major tm_abi_short_info)
foreach(case BAD_NAME BAD_STRUCT_SIZE BAD_KIND NO_KERNEL EMPTY_INPUT DUP_INPUT DUP_OUTPUT
        DUP_ATTR ATTR_NO_COLON ATTR_BAD_TYPE ATTR_SPLIT_TYPE ATTR_BAD_NAME INPLACE_INPUT
        INPLACE_OUTPUT GRAD_NO_FORWARD DOUBLE_GRAD_NO_GRAD GRAD_ATTR_NOT_SUBSET GRAD_ATTR_TYPE
        DUP_WITHIN DUP_ACROSS)
  string(TOLOWER ${case} lower)
  set(sources modules/refuse.c)
  if(case STREQUAL "DUP_WITHIN")
    list(APPEND sources modules/refuse_twin.c)
  endif()
  pd_add_test_module(tm_refuse_${lower} ${sources})
  target_compile_definitions(tm_refuse_${lower} PRIVATE REFUSE_${case})
  list(APPEND PD_MODULE_TEST_MODULES tm_refuse_${lower})
endforeach()

find_package(Threads REQUIRED)

# The tests load these modules, so they must be built first.
if(TARGET module_test)
  add_dependencies(module_test ${PD_MODULE_TEST_MODULES})
  target_link_libraries(module_test PRIVATE ${CMAKE_DL_LIBS} Threads::Threads)
endif()

if(TARGET registry_test)
  target_link_libraries(registry_test PRIVATE Threads::Threads)
endif()

# Internals (parsed ops, pd__module_load_replacing) are hidden in libpdext.so; this program
# links the static library, whose hidden functions a program can call.
add_executable(registry_internal_test internal/registry_internal_test.c)
target_include_directories(registry_internal_test PRIVATE ${CMAKE_SOURCE_DIR}/sdk/src)
target_link_libraries(registry_internal_test PRIVATE pd_test_harness pdext_jit_static)
target_compile_options(registry_internal_test PRIVATE ${PDEXT_WARNINGS})
add_dependencies(registry_internal_test ${PD_MODULE_TEST_MODULES})
gtest_discover_tests(registry_internal_test DISCOVERY_MODE PRE_TEST
                     PROPERTIES ENVIRONMENT "PDEXT_TEST=1")
