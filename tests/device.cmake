# The device suites: device_sim_test (the device path on the simulated device, libpdext_sim)
# and device_cuda_test (the CUDA plug-in: what GPU use says without a driver or device here,
# the real thing where a GPU is present).
pd_add_test_module(ds_sim_ops ops/sim_ops.c)
target_link_libraries(ds_sim_ops PRIVATE pdext_sim)
target_link_libraries(device_sim_test PRIVATE pdext_sim)
add_dependencies(device_sim_test ds_sim_ops)
# Op calls on a host's stream, counting the sim table's calls (device_host_stream_test).
target_link_libraries(device_host_stream_test PRIVATE pdext_sim)
add_dependencies(device_host_stream_test ds_sim_ops)
if(PDEXT_HAVE_CUDA_PLUGIN)
  target_compile_definitions(device_cuda_test PRIVATE PDEXT_HAVE_CUDA_PLUGIN=1)
  add_dependencies(device_cuda_test pdext_cuda)
endif()
# Stand-ins for the CUDA plug-in: a table of another ABI version, and no entry point.
pd_add_test_module(dc_fake_cuda_abi ops/fake_cuda_plugin.c)
pd_add_test_module(dc_fake_cuda_no_entry ops/fake_cuda_plugin.c)
target_compile_definitions(dc_fake_cuda_no_entry PRIVATE FAKE_NO_ENTRY=1)
add_dependencies(device_cuda_test dc_fake_cuda_abi dc_fake_cuda_no_entry)
# The convert kernel and staging (device_convert_test), pinned memory and GPU places with the
# sim's table served as the CUDA plug-in (device_pinned_test, through ds_sim_as_cuda).
target_link_libraries(device_convert_test PRIVATE pdext_sim)
target_link_libraries(device_pinned_test PRIVATE pdext_sim)
pd_add_test_module(ds_sim_as_cuda ops/sim_as_cuda_plugin.c)
target_link_libraries(ds_sim_as_cuda PRIVATE pdext_sim)
add_dependencies(device_pinned_test ds_sim_as_cuda)
