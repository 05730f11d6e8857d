# .npy/.npz and `pdext` command tests. npy_test builds its zip fixtures with zlib itself;
# pdext_cli_test runs the built `pdext` binary as a subprocess, on the example sources and on
# the relu example built by hand as an op module (cli_relu.so).
find_package(ZLIB REQUIRED)
target_link_libraries(npy_test PRIVATE ZLIB::ZLIB)

pd_add_test_module(cli_relu ${PROJECT_SOURCE_DIR}/examples/relu/relu.c)
pd_add_test_module(cli_echo ${CMAKE_CURRENT_SOURCE_DIR}/cli/echo_op.c)

if(TARGET pdext_cli_test AND TARGET pdext_cmd)
  add_dependencies(pdext_cli_test pdext_cmd cli_relu cli_echo)
  target_compile_definitions(pdext_cli_test PRIVATE PDEXT_CMD="$<TARGET_FILE:pdext_cmd>"
                             PDEXT_EXAMPLES="${PROJECT_SOURCE_DIR}/examples")
endif()

# `pdext explain` (explain_cli_test.c): the relu example and the module of another ABI major
# (module.cmake) as the libraries it describes.
if(TARGET explain_cli_test AND TARGET pdext_cmd)
  add_dependencies(explain_cli_test pdext_cmd cli_relu tm_abi_other_major)
  target_compile_definitions(explain_cli_test PRIVATE PDEXT_CMD="$<TARGET_FILE:pdext_cmd>")
endif()
