# pdextToolchain.cmake - before enable_language(C CXX): tells a user without a C or C++
# compiler which package to install, in words, instead of CMake's "No CMAKE_C_COMPILER could
# be found". A compiler named by CC / CXX or -DCMAKE_<LANG>_COMPILER is taken as given.
foreach(_pd_lang C CXX)
  if(_pd_lang STREQUAL "C")
    set(_pd_env CC)
    set(_pd_names cc gcc clang)
  else()
    set(_pd_env CXX)
    set(_pd_names c++ g++ clang++)
  endif()
  if(NOT CMAKE_${_pd_lang}_COMPILER AND NOT DEFINED ENV{${_pd_env}})
    find_program(_pd_compiler_${_pd_lang} NAMES ${_pd_names})
    if(NOT _pd_compiler_${_pd_lang})
      message(FATAL_ERROR
        "pdext: no ${_pd_lang} compiler found (looked for ${_pd_names} on PATH). pdext is C and "
        "C++ built with CMake and Ninja; on Debian or Ubuntu install them with\n"
        "    apt-get install build-essential cmake ninja-build\n"
        "(or set ${_pd_env} to a compiler), then run the install again.")
    endif()
  endif()
endforeach()
