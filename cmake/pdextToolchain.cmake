# pdextToolchain.cmake - before enable_language(C CXX): tells a user whose machine cannot
# compile C or C++ which package to install, in words, instead of CMake's "No CMAKE_C_COMPILER
# could be found" or "is not able to compile a simple test program" (`pip install .` meets
# this first on a bare machine). Each compiler is found as CMake would find it and made to
# compile one line (a compiler without its assembler or headers is as good as none). A
# compiler named by CC / CXX or -DCMAKE_<LANG>_COMPILER is taken as given.
set(_pd_probe ${CMAKE_BINARY_DIR}/CMakeFiles/pd_toolchain_probe.c)
file(WRITE ${_pd_probe} "int pd_toolchain_probe(void) { return 0; }\n")
foreach(_pd_lang C CXX)
  if(_pd_lang STREQUAL "C")
    set(_pd_env CC)
    set(_pd_names cc gcc clang)
    set(_pd_x c)
  else()
    set(_pd_env CXX)
    set(_pd_names c++ g++ clang++)
    set(_pd_x c++)
  endif()
  if(CMAKE_${_pd_lang}_COMPILER OR DEFINED ENV{${_pd_env}})
    continue()
  endif()
  find_program(_pd_compiler_${_pd_lang} NAMES ${_pd_names})
  set(_pd_why "none of ${_pd_names} is on PATH")
  if(_pd_compiler_${_pd_lang})
    execute_process(COMMAND ${_pd_compiler_${_pd_lang}} -x ${_pd_x} -c ${_pd_probe} -o /dev/null
                    RESULT_VARIABLE _pd_rc OUTPUT_VARIABLE _pd_out ERROR_VARIABLE _pd_out)
    if(_pd_rc EQUAL 0)
      continue()
    endif()
    string(STRIP "${_pd_out}" _pd_out)
    set(_pd_why "${_pd_compiler_${_pd_lang}} cannot compile: ${_pd_out}")
  endif()
  message(FATAL_ERROR
    "pdext: no working ${_pd_lang} compiler found (${_pd_why}). pdext is C and C++ "
    "built with CMake and Ninja; on Debian or Ubuntu install them with\n"
    "    apt-get install build-essential cmake ninja-build\n"
    "(or set ${_pd_env} to a compiler), then run the install again.")
endforeach()
