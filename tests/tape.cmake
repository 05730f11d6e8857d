# Modules of the autograd tests (tape_test, gradcheck_test, gradcheck_cli_test): small differentiable ops with
# right and deliberately wrong backward kernels, built like an author builds them.
pd_add_test_module(tp_tape_ops tape_ops.c)
foreach(t tape_test gradcheck_test)
  if(TARGET ${t})
    add_dependencies(${t} tp_tape_ops)
  endif()
endforeach()

# `pdext check` end to end: the command, the relu example as a library, the echo op (an attr
# the command cannot guess) and the ops above.
if(TARGET gradcheck_cli_test AND TARGET pdext_cmd)
  add_dependencies(gradcheck_cli_test pdext_cmd cli_relu cli_echo tp_tape_ops)
  target_compile_definitions(gradcheck_cli_test PRIVATE PDEXT_CMD="$<TARGET_FILE:pdext_cmd>"
                             PDEXT_EXAMPLES="${PROJECT_SOURCE_DIR}/examples")
endif()
