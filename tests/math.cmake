# Modules of the tensor-function tests (math_test): C ops over pd_math.h, built like an
# author builds them (no libpdext). The simulated device supplies a device place to refuse.
pd_add_test_module(mt_math_ops ops/math_ops.c)
if(TARGET math_test)
  add_dependencies(math_test mt_math_ops)
  target_link_libraries(math_test PRIVATE pdext_sim)
endif()
