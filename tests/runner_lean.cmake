# Module of runner_lean_test: simple ops whose calls take the runner's lean binding.
pd_add_test_module(rl_lean_ops ops/lean_ops.c)
if(TARGET runner_lean_test)
  add_dependencies(runner_lean_test rl_lean_ops)
endif()
