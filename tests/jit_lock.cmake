# jit_lock_test also runs the `pdext` command, to see what it prints while waiting for a lock.
if(TARGET jit_lock_test AND TARGET pdext_cmd)
  add_dependencies(jit_lock_test pdext_cmd)
  target_compile_definitions(jit_lock_test PRIVATE PDEXT_CMD="$<TARGET_FILE:pdext_cmd>")
endif()
