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

# examples/train: its ops as a module, its program built as an author builds it (against
# libpdext), and the suite that trains with it and gradchecks its ops.
pd_add_test_module(tp_train_ops ${PROJECT_SOURCE_DIR}/examples/train/train_ops.c)
target_link_libraries(tp_train_ops PRIVATE m)
add_executable(tp_train_example ${PROJECT_SOURCE_DIR}/examples/train/train.c)
target_link_libraries(tp_train_example PRIVATE pdext m)
target_compile_options(tp_train_example PRIVATE ${PDEXT_WARNINGS})
set_target_properties(tp_train_example PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
if(TARGET tape_train_test)
  add_dependencies(tape_train_test tp_train_ops tp_train_example rt_example_relu)
endif()

# The grad op's binding as pdext.h publishes it (grad_binding_test.c): ops whose grad ops bind
# in every way the rule allows, the relu example and the ops above.
pd_add_test_module(gb_ops grad_binding_ops.c)
foreach(part 1 2 3)
  set(_gb_split_name gb_split_fwd_v1 gb_split_fwd_v2 gb_split_grad)
  math(EXPR _gb_i "${part} - 1")
  list(GET _gb_split_name ${_gb_i} _gb_name)
  pd_add_test_module(${_gb_name} grad_binding_split.c)
  target_compile_definitions(${_gb_name} PRIVATE GB_PART=${part})
endforeach()
if(TARGET grad_binding_test)
  add_dependencies(grad_binding_test gb_ops gb_split_fwd_v1 gb_split_fwd_v2 gb_split_grad
                   tp_tape_ops cli_relu)
endif()
