# Device plug-ins, each a library of its own that reaches libpdext through pd_device.h:
#   - libpdext_sim: the simulated device (pd_sim_device.h), always built; the test suite runs
#     the device path on it, and custom-device authors read it as the reference.
#   - libpdext_cuda: the CUDA runtime behind GPU places, built when the CUDA toolkit (the
#     runtime library and headers) is found. libpdext never links it: it dlopens the plug-in
#     the first time a GPU place is used, so one install serves CPU-only and GPU machines.
add_library(pdext_sim SHARED src/device/sim/sim_device.c)
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
