# Modules of the strided-tensor and ABI 2 tests (runner_strided_test): ops that record what
# layout their inputs reached the kernel in, an ABI 1 module (a faked info block), and modules
# that declare strided inputs wrongly. Built like an author builds them: no libpdext.
pd_add_test_module(st_strided_ops ops/strided_ops.c)
pd_add_test_module(tm_abi_v1 modules/abi_variant.c)
target_compile_definitions(tm_abi_v1 PRIVATE TEST_ABI_MAJOR=1 TEST_ABI_MINOR=1)
pd_add_test_module(tm_strided_bad_flags modules/strided_bad.c)
target_compile_definitions(tm_strided_bad_flags PRIVATE BAD_FLAGS)
pd_add_test_module(tm_strided_bad_bit modules/strided_bad.c)

if(TARGET runner_strided_test)
  add_dependencies(runner_strided_test st_strided_ops tm_abi_v1 tm_strided_bad_flags
                   tm_strided_bad_bit)
endif()
