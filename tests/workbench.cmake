# The op author's workbench beyond gradcheck (new_cli_test): `pdext new` scaffolds of every
# language checked with `pdext check`, and `pdext check` on every example (examples_check_test).
if(TARGET new_cli_test AND TARGET pdext_cmd)
  add_dependencies(new_cli_test pdext_cmd)
  target_compile_definitions(new_cli_test PRIVATE PDEXT_CMD="$<TARGET_FILE:pdext_cmd>")
endif()
if(TARGET examples_check_test AND TARGET pdext_cmd)
  add_dependencies(examples_check_test pdext_cmd pdext_aot)
  target_compile_definitions(examples_check_test PRIVATE PDEXT_CMD="$<TARGET_FILE:pdext_cmd>"
                             PDEXT_EXAMPLES="${PROJECT_SOURCE_DIR}/examples")
endif()
