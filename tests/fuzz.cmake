# libFuzzer harnesses for the parsers of untrusted input (tests/fuzz/*.c, see
# tests/fuzz/README.md). Opt-in and clang only: -DPDEXT_BUILD_FUZZERS=ON. Each harness is
# linked with its own copy of libpdext's sources built with coverage instrumentation and
# ASan+UBSan, so the normal library, its tests and CI are unaffected. Not run by ctest (a
# fuzzer runs until stopped); the regression inputs they found live in the C tests.
option(PDEXT_BUILD_FUZZERS "Build the libFuzzer harnesses in tests/fuzz (clang only)" OFF)

if(PDEXT_BUILD_FUZZERS)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(WARNING "PDEXT_BUILD_FUZZERS needs clang (libFuzzer); the C compiler is "
                    "${CMAKE_C_COMPILER_ID}: no fuzzers built")
  else()
    set(_pd_fuzz_flags -fsanitize=address,undefined -fno-sanitize-recover=undefined
        -fno-omit-frame-pointer -g)
    get_target_property(_pd_fuzz_core pdext_objects SOURCES)
    list(TRANSFORM _pd_fuzz_core PREPEND ${PROJECT_SOURCE_DIR}/sdk/)
    get_target_property(_pd_fuzz_jit pdext_jit_objects SOURCES)
    set(_pd_fuzz_lib_sources ${_pd_fuzz_core} ${_pd_fuzz_jit})
    # libpdext's sources, with its include directories and definitions (jit templates,
    # install paths), instrumented for coverage.
    add_library(pd_fuzz_lib STATIC ${_pd_fuzz_lib_sources})
    target_include_directories(pd_fuzz_lib PUBLIC
                               $<TARGET_PROPERTY:pdext_jit_objects,INCLUDE_DIRECTORIES>
                               ${PROJECT_SOURCE_DIR}/sdk/src ${PROJECT_SOURCE_DIR}/jit)
    target_compile_definitions(pd_fuzz_lib PUBLIC
                               $<TARGET_PROPERTY:pdext_jit_objects,COMPILE_DEFINITIONS>)
    target_compile_options(pd_fuzz_lib PUBLIC ${_pd_fuzz_flags} PRIVATE -fsanitize=fuzzer-no-link)
    target_link_libraries(pd_fuzz_lib PUBLIC ZLIB::ZLIB ${CMAKE_DL_LIBS} Threads::Threads)
    target_link_options(pd_fuzz_lib PUBLIC ${_pd_fuzz_flags})

    file(GLOB _pd_fuzzers CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_*.c)
    foreach(src ${_pd_fuzzers})
      get_filename_component(name ${src} NAME_WE)
      add_executable(${name} ${src})
      target_link_libraries(${name} PRIVATE pd_fuzz_lib)
      target_compile_options(${name} PRIVATE ${PDEXT_C_WARNINGS} -fsanitize=fuzzer)
      target_link_options(${name} PRIVATE -fsanitize=fuzzer)
      set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY
                                               ${CMAKE_CURRENT_BINARY_DIR}/fuzz)
    endforeach()
  endif()
endif()
