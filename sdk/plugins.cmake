# Device plug-ins, each a library of its own that reaches libpdext through pd_device.h:
#   - libpdext_sim: the simulated device (pd_sim_device.h), always built; the test suite runs
#     the device path on it, and custom-device authors read it as the reference.
#   - libpdext_cuda: the CUDA runtime behind GPU places, built when the CUDA toolkit (the
#     runtime library and headers) is found. libpdext never links it: it dlopens the plug-in
#     the first time a GPU place is used, so one install serves CPU-only and GPU machines.
#     Its kernels (cuda_convert.cu: strided copies and casts on the GPU) are compiled by
#     the toolkit's nvcc with a plain custom command rather than CMake's CUDA language, so
#     that no C flag (the sanitizers') reaches nvcc and no CUDA language detection can fail
#     the configure; architectures: PDEXT_CUDA_ARCHITECTURES, real code for each and PTX
#     of the last; C++17, so that toolkits older than 12 build it too. Without nvcc the plug-in is built without them (casts then go through
#     host memory).
add_library(pdext_sim SHARED src/device/sim/sim_device.c src/device/sim/sim_convert.c)
# Finds the libraries it needs beside itself in any prefix (a wheel, a staged install).
set_target_properties(pdext_sim PROPERTIES INSTALL_RPATH "$ORIGIN")
target_include_directories(pdext_sim PUBLIC $<BUILD_INTERFACE:${PDEXT_INCLUDE_DIR}>
                                            $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/pdext>)
target_compile_options(pdext_sim PRIVATE ${PDEXT_C_WARNINGS})
target_link_libraries(pdext_sim PUBLIC pdext PRIVATE Threads::Threads)
install(TARGETS pdext_sim EXPORT pdextTargets LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})

find_package(CUDAToolkit QUIET)
if(CUDAToolkit_FOUND AND TARGET CUDA::cudart)
  add_library(pdext_cuda SHARED src/device/cuda/cuda_device.c)
  target_include_directories(pdext_cuda PRIVATE ${PDEXT_INCLUDE_DIR})
  target_compile_options(pdext_cuda PRIVATE ${PDEXT_C_WARNINGS} -fvisibility=hidden)
  target_link_libraries(pdext_cuda PRIVATE CUDA::cudart)
  set(PDEXT_CUDA_ARCHITECTURES "75;80;86;89;90" CACHE STRING
      "GPU architectures of libpdext_cuda's kernels (real code for each, PTX of the last)")
  if(CUDAToolkit_NVCC_EXECUTABLE AND EXISTS "${CUDAToolkit_NVCC_EXECUTABLE}")
    set(gencode "")
    foreach(arch IN LISTS PDEXT_CUDA_ARCHITECTURES)
      list(APPEND gencode -gencode=arch=compute_${arch},code=sm_${arch})
      set(last ${arch})
    endforeach()
    list(APPEND gencode -gencode=arch=compute_${last},code=compute_${last})
    set(kernels ${CMAKE_CURRENT_BINARY_DIR}/cuda_convert.o)
    add_custom_command(
      OUTPUT ${kernels}
      COMMAND ${CUDAToolkit_NVCC_EXECUTABLE} -O3 -std=c++17 ${gencode}
              -Xcompiler=-fPIC,-fvisibility=hidden,-fno-exceptions -Werror=all-warnings
              -I${PDEXT_INCLUDE_DIR} -c ${CMAKE_CURRENT_SOURCE_DIR}/src/device/cuda/cuda_convert.cu
              -o ${kernels}
      DEPENDS src/device/cuda/cuda_convert.cu include/pd_device.h include/pd_dtype.h
              include/pd_tensor.h include/pd_base.h include/pd_place.h
      COMMENT "nvcc: libpdext_cuda kernels (${PDEXT_CUDA_ARCHITECTURES})"
      VERBATIM)
    target_sources(pdext_cuda PRIVATE ${kernels})
    target_compile_definitions(pdext_cuda PRIVATE PDEXT_CUDA_KERNELS=1)
    # The kernels' registration code needs libstdc++ (static-local guards).
    set_target_properties(pdext_cuda PROPERTIES LINKER_LANGUAGE CXX)
  endif()
  # Beside libpdext, where libpdext looks for it first.
  set_target_properties(pdext_cuda PROPERTIES LIBRARY_OUTPUT_DIRECTORY
                                              $<TARGET_FILE_DIR:pdext>)
  install(TARGETS pdext_cuda LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  set(PDEXT_HAVE_CUDA_PLUGIN ON CACHE INTERNAL "libpdext_cuda is built")
  message(STATUS "pdext: CUDA toolkit ${CUDAToolkit_VERSION} found; building libpdext_cuda")
else()
  set(PDEXT_HAVE_CUDA_PLUGIN OFF CACHE INTERNAL "libpdext_cuda is built")
  message(STATUS "pdext: CUDA toolkit not found; libpdext_cuda is not built (GPU places "
                 "will report PD_ERR_UNAVAILABLE)")
endif()
