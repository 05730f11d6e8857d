# headers.cmake - build-time checks that the public headers (extension.h, pdext.h, pdext_jit.h)
# compile warning-free in the three languages op code is written in:
#   - C11 with -Wall -Wextra -Werror -pedantic            (headers_c.c)
#   - C++20 with g++ -Wall -Wextra -Werror -pedantic      (headers_cxx.cc)
#   - CUDA C++ with nvcc, -Xcompiler -Wall,-Wextra,-Werror (headers_cuda.cu), when nvcc exists.
# They are ordinary targets of the default build (object files nobody links or runs), so a header
# regression breaks `ninja` itself instead of waiting for an op author to hit it.

add_library(pd_headers_c OBJECT ${CMAKE_CURRENT_LIST_DIR}/headers_c.c)
target_include_directories(pd_headers_c PRIVATE ${PDEXT_INCLUDE_DIR})
target_compile_options(pd_headers_c PRIVATE ${PDEXT_C_WARNINGS})
set_target_properties(pd_headers_c PROPERTIES C_STANDARD 11 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)

add_library(pd_headers_cxx OBJECT ${CMAKE_CURRENT_LIST_DIR}/headers_cxx.cc)
target_include_directories(pd_headers_cxx PRIVATE ${PDEXT_INCLUDE_DIR})
target_compile_options(pd_headers_cxx PRIVATE ${PDEXT_WARNINGS} -pedantic)
set_target_properties(pd_headers_cxx PROPERTIES CXX_STANDARD 20 CXX_STANDARD_REQUIRED ON
                                                CXX_EXTENSIONS OFF)

# CUDA: the project does not enable the CUDA language (GPU support is optional everywhere), so
# nvcc gets a custom command of its own. -DPDEXT_CHECK_CUDA_HEADERS=OFF turns the check off.
option(PDEXT_CHECK_CUDA_HEADERS "Compile the public headers with nvcc too, when it is found" ON)
if(PDEXT_CHECK_CUDA_HEADERS)
  find_program(PDEXT_NVCC nvcc HINTS ENV CUDA_HOME ENV CUDA_PATH PATH_SUFFIXES bin
               PATHS /usr/local/cuda/bin /usr/local/cuda)
endif()
set(PD_NVCC_FLAGS -std=c++20 -Xcompiler -Wall,-Wextra,-Werror -Werror all-warnings)

# An nvcc that cannot compile an empty kernel with these flags here (too old for C++20, or an
# unsupported host compiler) is a toolchain problem, not a header one: skip, and say so.
if(PDEXT_NVCC AND NOT DEFINED CACHE{PDEXT_NVCC_USABLE})
  set(probe_dir ${CMAKE_CURRENT_BINARY_DIR}/nvcc_probe)
  file(WRITE ${probe_dir}/probe.cu "__global__ void pd_probe(int *p) { *p = 1; }\n")
  execute_process(COMMAND ${PDEXT_NVCC} ${PD_NVCC_FLAGS} -c probe.cu -o probe.o
                  WORKING_DIRECTORY ${probe_dir} RESULT_VARIABLE probe_rc
                  OUTPUT_VARIABLE probe_out ERROR_VARIABLE probe_out)
  if(probe_rc EQUAL 0)
    set(PDEXT_NVCC_USABLE ON CACHE BOOL "nvcc compiles C++20 CUDA with the header-check flags")
  else()
    set(PDEXT_NVCC_USABLE OFF CACHE BOOL "nvcc compiles C++20 CUDA with the header-check flags")
    message(STATUS "pdext: ${PDEXT_NVCC} cannot compile a trivial kernel with "
                   "${PD_NVCC_FLAGS}; skipping the CUDA header check:\n${probe_out}")
  endif()
endif()

if(PDEXT_NVCC AND PDEXT_NVCC_USABLE)
  file(GLOB PD_PUBLIC_HEADERS CONFIGURE_DEPENDS ${PDEXT_INCLUDE_DIR}/*.h)
  set(PD_HEADERS_CUDA_OBJ ${CMAKE_CURRENT_BINARY_DIR}/headers_cuda.o)
  add_custom_command(
    OUTPUT ${PD_HEADERS_CUDA_OBJ}
    COMMAND ${PDEXT_NVCC} ${PD_NVCC_FLAGS} -I${PDEXT_INCLUDE_DIR}
            -c ${CMAKE_CURRENT_LIST_DIR}/headers_cuda.cu -o ${PD_HEADERS_CUDA_OBJ}
    DEPENDS ${CMAKE_CURRENT_LIST_DIR}/headers_cuda.cu ${PD_PUBLIC_HEADERS}
    COMMENT "Compiling the public headers as CUDA C++ (nvcc)"
    VERBATIM)
  add_custom_target(pd_headers_cuda ALL DEPENDS ${PD_HEADERS_CUDA_OBJ})
  message(STATUS "pdext: checking the public headers with ${PDEXT_NVCC}")
elseif(PDEXT_CHECK_CUDA_HEADERS)
  message(STATUS "pdext: nvcc not found (or not usable); the CUDA header check is skipped")
endif()

# PD_BUILD_OP's input limit is a compile-time error in every language (pd_op.h, "At most
# PD_MAX_INPUTS declared inputs"): tests/compile_fail/too_many_inputs.c with 17 inputs must
# fail naming the limit; with 16 it must compile warning-free. Plain flags first (no -Werror:
# the error must not depend on it), then the strict ones.
set(PD_TOO_MANY ${CMAKE_CURRENT_LIST_DIR}/compile_fail/too_many_inputs.c)
set(PD_TOO_MANY_OUT ${CMAKE_CURRENT_BINARY_DIR}/too_many_inputs.o)
function(pd_add_compile_test name compiler flags expect)
  add_test(NAME ${name}
           COMMAND ${CMAKE_COMMAND} -DCOMPILER=${compiler} "-DFLAGS=${flags}"
                   -DSOURCE=${PD_TOO_MANY} -DOUTPUT=${PD_TOO_MANY_OUT}.${name}
                   "-DEXPECT_ERROR=${expect}" -P ${CMAKE_CURRENT_LIST_DIR}/compile_fail/expect_compile.cmake)
endfunction()
set(PD_C_FLAGS "-std=c11 -x c -I${PDEXT_INCLUDE_DIR}")
set(PD_CXX_FLAGS "-std=c++20 -x c++ -I${PDEXT_INCLUDE_DIR}")
set(PD_STRICT "-Wall -Wextra -Werror -pedantic")
pd_add_compile_test(Headers.SeventeenInputsAreACompileErrorInC ${CMAKE_C_COMPILER}
                    "${PD_C_FLAGS} -DPD_TEST_17_INPUTS" "PD_BUILD_OP_declares_more_than_16_inputs")
pd_add_compile_test(Headers.SeventeenInputsAreACompileErrorInCxx ${CMAKE_CXX_COMPILER}
                    "${PD_CXX_FLAGS} -DPD_TEST_17_INPUTS"
                    "PD_BUILD_OP declares more than 16 inputs (PD_MAX_INPUTS)")
pd_add_compile_test(Headers.SixteenInputsCompileInC ${CMAKE_C_COMPILER}
                    "${PD_C_FLAGS} ${PD_STRICT}" "")
pd_add_compile_test(Headers.SixteenInputsCompileInCxx ${CMAKE_CXX_COMPILER}
                    "${PD_CXX_FLAGS} ${PD_STRICT}" "")
if(PDEXT_NVCC AND PDEXT_NVCC_USABLE)
  pd_add_compile_test(Headers.SeventeenInputsAreACompileErrorInCuda ${PDEXT_NVCC}
                      "-std=c++20 -x cu -I${PDEXT_INCLUDE_DIR} -DPD_TEST_17_INPUTS"
                      "PD_BUILD_OP declares more than 16 inputs (PD_MAX_INPUTS)")
  pd_add_compile_test(Headers.SixteenInputsCompileInCuda ${PDEXT_NVCC}
                      "-std=c++20 -x cu -I${PDEXT_INCLUDE_DIR} -Xcompiler -Wall,-Wextra,-Werror"
                      "")
endif()
