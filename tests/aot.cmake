# MindSpore AOT adapter tests (aot_test): the test kernels built as MindSpore builds them
# (-D_GLIBCXX_USE_CXX11_ABI=0) and as users who compile themselves do (the default ABI), and a
# file that is not a library.
foreach(abi old new)
  add_library(aot_kernels_${abi} MODULE ${CMAKE_CURRENT_SOURCE_DIR}/ops/aot_kernels.cc)
  target_include_directories(aot_kernels_${abi} PRIVATE ${PDEXT_INCLUDE_DIR})
  set_target_properties(aot_kernels_${abi} PROPERTIES PREFIX "" LIBRARY_OUTPUT_DIRECTORY
                        ${CMAKE_CURRENT_BINARY_DIR} CXX_STANDARD 17)
  target_compile_options(aot_kernels_${abi} PRIVATE ${PDEXT_WARNINGS})
endforeach()
target_compile_definitions(aot_kernels_old PRIVATE _GLIBCXX_USE_CXX11_ABI=0)
# A GPU kernel's library without CUDA: its CUDA runtime calls stay undefined.
add_library(aot_gpu_kernel MODULE ${CMAKE_CURRENT_SOURCE_DIR}/ops/aot_gpu_kernel.cc)
set_target_properties(aot_gpu_kernel PROPERTIES PREFIX "" LIBRARY_OUTPUT_DIRECTORY
                      ${CMAKE_CURRENT_BINARY_DIR})
target_compile_options(aot_gpu_kernel PRIVATE ${PDEXT_WARNINGS})
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/aot_not_elf.so "this is not an ELF file\n")

if(TARGET aot_test)
  add_dependencies(aot_test aot_kernels_old aot_kernels_new aot_gpu_kernel)
  target_link_libraries(aot_test PRIVATE pdext_aot)
endif()
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/aot_broken.cc "extern \"C\" int F( { return 0; }\\n")

# The example's C host, built as its README builds it.
add_executable(aot_example_host ${PROJECT_SOURCE_DIR}/examples/aot/host.c)
target_link_libraries(aot_example_host PRIVATE pdext_aot pdext_jit pdext) # it compiles the source
target_compile_options(aot_example_host PRIVATE ${PDEXT_C_WARNINGS})

if(TARGET aot_cli_test AND TARGET pdext_cmd)
  add_dependencies(aot_cli_test pdext_cmd aot_kernels_old cli_relu aot_example_host)
  target_compile_definitions(aot_cli_test PRIVATE PDEXT_CMD="$<TARGET_FILE:pdext_cmd>"
                             PDEXT_EXAMPLES="${PROJECT_SOURCE_DIR}/examples"
                             AOT_EXAMPLE_HOST="$<TARGET_FILE:aot_example_host>")
endif()

if(TARGET aot_cuda_test)
  target_link_libraries(aot_cuda_test PRIVATE pdext_aot)
endif()

# AOT functions in bundles (aot_bundle_test): `pdext bundle` at test time, then a C host linked
# against the archives, libpdext_aot and the shared libpdext of this build tree (no JIT: an
# inference program needs neither libpdext_jit nor zlib, which the test checks).
if(TARGET aot_bundle_test AND TARGET pdext_cmd)
  add_dependencies(aot_bundle_test pdext_cmd pdext_aot)
  string(REPLACE ";" " " _pd_aot_bundle_san "${PDEXT_SANITIZER_FLAGS}")
  target_compile_definitions(aot_bundle_test PRIVATE PDEXT_CMD="$<TARGET_FILE:pdext_cmd>"
    PDEXT_EXAMPLES="${PROJECT_SOURCE_DIR}/examples"
    PD_AOT_BUNDLE_CC="${CMAKE_C_COMPILER}"
    PD_AOT_BUNDLE_SANITIZE_FLAGS="${_pd_aot_bundle_san}"
    PD_AOT_LIB="$<TARGET_FILE:pdext_aot>" PD_AOT_LIB_DIR="$<TARGET_FILE_DIR:pdext_aot>:$<TARGET_FILE_DIR:pdext>"
    PD_CORE_LIB="$<TARGET_FILE:pdext>")
endif()

# Where AOT kernels run (aot_device_test): a kernel of the simulated device.
add_library(aot_sim_kernel MODULE ${CMAKE_CURRENT_SOURCE_DIR}/ops/aot_sim_kernel.cc)
target_include_directories(aot_sim_kernel PRIVATE ${PDEXT_INCLUDE_DIR})
target_link_libraries(aot_sim_kernel PRIVATE pdext_sim)
set_target_properties(aot_sim_kernel PROPERTIES PREFIX "" LIBRARY_OUTPUT_DIRECTORY
                      ${CMAKE_CURRENT_BINARY_DIR} CXX_STANDARD 17)
target_compile_options(aot_sim_kernel PRIVATE ${PDEXT_WARNINGS})
if(TARGET aot_device_test)
  add_dependencies(aot_device_test aot_sim_kernel aot_kernels_new aot_gpu_kernel)
  target_link_libraries(aot_device_test PRIVATE pdext_aot pdext_sim)
endif()
