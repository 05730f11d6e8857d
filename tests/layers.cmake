# The folders of sdk/src are layers (docs/architecture.md, "Layers of libpdext"): no #include
# and no call of libpdext's objects points up the layer table or makes a circle between
# folders, and every folder has a row in the table (tools/check_layers.py). The second test
# shows the guard biting: the same map less the row of sdk/src/math/ is refused, naming it.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  set(_pd_layers ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tools/check_layers.py
                 --src ${PROJECT_SOURCE_DIR}/sdk/src)
  add_test(NAME layers.FoldersOfSdkSrcAreLayers
           COMMAND ${_pd_layers} --doc ${PROJECT_SOURCE_DIR}/docs/architecture.md
                   --objects ${PROJECT_BINARY_DIR}/sdk/CMakeFiles/pdext_objects.dir/src)
  file(STRINGS ${PROJECT_SOURCE_DIR}/docs/architecture.md _pd_map)
  list(FILTER _pd_map EXCLUDE REGEX "`sdk/src/math/`")
  list(JOIN _pd_map "\n" _pd_map)
  file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/layers_map_without_math.md "${_pd_map}\n")
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
               ${PROJECT_SOURCE_DIR}/docs/architecture.md)
  add_test(NAME layers.AFolderMissingFromTheMapFails
           COMMAND ${_pd_layers} --doc ${CMAKE_CURRENT_BINARY_DIR}/layers_map_without_math.md)
  set_tests_properties(layers.AFolderMissingFromTheMapFails PROPERTIES
                       PASS_REGULAR_EXPRESSION "sdk/src/math is missing from the layer table")
  # The arrows that must never exist: a file of sdk/src/adapters/ including the JIT's header
  # (adapters -> jit) is refused, naming the arrow and the file.
  file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/layers_adapter_jit/src/adapters/uses_jit.c
       "#include \"pdext_jit.h\"\n")
  file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/layers_adapter_jit/map.md
       "| 10 | `sdk/src/adapters/` | adapters | | |\n")
  add_test(NAME layers.AnAdapterIncludingTheJitFails
           COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tools/check_layers.py
                   --src ${CMAKE_CURRENT_BINARY_DIR}/layers_adapter_jit/src
                   --doc ${CMAKE_CURRENT_BINARY_DIR}/layers_adapter_jit/map.md)
  set_tests_properties(layers.AnAdapterIncludingTheJitFails PROPERTIES PASS_REGULAR_EXPRESSION
                       "forbidden arrow adapters -> jit: adapters/uses_jit.c:1 includes pdext_jit.h")
  # One rule, one place (tools/check_rules_once.py): the identifier check, the reading of an
  # AOT spec "FILE:FUNC", libpdext's directory, the sizing of vector outputs, the rows of
  # `pdext check` and its random filler, and the grad op's binding each have one implementation
  # in the product folders; the second test shows copies refused.
  set(_pd_rules ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tools/check_rules_once.py
                --root ${PROJECT_SOURCE_DIR})
  add_test(NAME rules.EachRuleHasOnePlace COMMAND ${_pd_rules})
  file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/rules_second_copy.c
       "static bool is_identifier(const char *s);\n#define VECTOR_OUTPUT_CAPACITY 256\n"
       "row(s, op, dt, \"shapes+infer\", \"ok\", ran);\n"
       "s = s * 6364136223846793005ull + 1;\n")
  file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/rules_second_copy.py
       "def grad_key(name):\n    return name + \"@GRAD\"\n")
  add_test(NAME rules.ASecondCopyFails
           COMMAND ${_pd_rules} --extra ${CMAKE_CURRENT_BINARY_DIR}/rules_second_copy.c
                   --extra ${CMAKE_CURRENT_BINARY_DIR}/rules_second_copy.py)
  set_tests_properties(rules.ASecondCopyFails PROPERTIES PASS_REGULAR_EXPRESSION
                       "5 copies of rules that have one place")
else()
  message(STATUS "layers: no Python 3 interpreter; the layer check (tools/check_layers.py) is not a test")
endif()
