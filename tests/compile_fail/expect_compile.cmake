# expect_compile.cmake - a ctest step run with `cmake -P`: compiles SOURCE with COMPILER and
# FLAGS (a ;-list) and checks the outcome. EXPECT_ERROR set: the compile must fail and its
# output contain EXPECT_ERROR. Unset: it must succeed.
separate_arguments(flags UNIX_COMMAND "${FLAGS}")
execute_process(COMMAND ${COMPILER} ${flags} -c ${SOURCE} -o ${OUTPUT}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(DEFINED EXPECT_ERROR AND NOT EXPECT_ERROR STREQUAL "")
  if(rc EQUAL 0)
    message(FATAL_ERROR "${SOURCE} compiled, but it must fail with \"${EXPECT_ERROR}\":\n${out}")
  endif()
  string(FIND "${out}" "${EXPECT_ERROR}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${SOURCE} failed without \"${EXPECT_ERROR}\" in its output:\n${out}")
  endif()
elseif(NOT rc EQUAL 0)
  message(FATAL_ERROR "${SOURCE} must compile:\n${out}")
endif()
