# api_table.cmake - the module of api_table_test: an op reporting the table its module got.
pd_add_test_module(rt_api_ops ops/api_ops.c)
if(TARGET api_table_test)
  add_dependencies(api_table_test rt_api_ops)
endif()
