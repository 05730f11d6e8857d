# Modules of the autograd tests (tape_test, gradcheck_test): small differentiable ops with
# right and deliberately wrong backward kernels, built like an author builds them.
pd_add_test_module(tp_tape_ops tape_ops.c)
foreach(t tape_test gradcheck_test)
  if(TARGET ${t})
    add_dependencies(${t} tp_tape_ops)
  endif()
endforeach()
