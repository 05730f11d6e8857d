# Settings of the JIT loader (jit/*.c, compiled into libpdext_jit), included by
# jit/CMakeLists.txt:
#   - templates/build.ninja.in embedded as a C string (the loader needs no data files);
#   - where the SDK headers are installed, and where they are in the source tree (used when
#     libpdext runs from its build tree);
#   - the C++ compiler family and major version that built libpdext, for the JIT's
#     compiler check on C++/CUDA modules.
set(PDEXT_NINJA_TEMPLATE_IN ${PROJECT_SOURCE_DIR}/templates/build.ninja.in)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${PDEXT_NINJA_TEMPLATE_IN})
file(READ ${PDEXT_NINJA_TEMPLATE_IN} _pd_template)
string(REPLACE "\\" "\\\\" _pd_template "${_pd_template}")
string(REPLACE "\"" "\\\"" _pd_template "${_pd_template}")
string(REPLACE "\n" "\\n\"\n    \"" _pd_template "${_pd_template}")
set(_pd_template_h ${CMAKE_CURRENT_BINARY_DIR}/generated/pd_jit_template.h)
# Written through configure_file so that an unchanged template does not recompile anything.
file(WRITE ${_pd_template_h}.tmp
     "/* Generated from templates/build.ninja.in by jit/jit.cmake; do not edit. */\n"
     "static const char pd__ninja_template[] =\n    \"${_pd_template}\";\n")
configure_file(${_pd_template_h}.tmp ${_pd_template_h} COPYONLY)
target_include_directories(pdext_jit_objects PRIVATE ${CMAKE_CURRENT_BINARY_DIR}/generated)

string(REGEX MATCH "^[0-9]+" _pd_cxx_major "${CMAKE_CXX_COMPILER_VERSION}")
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  set(_pd_cxx_id gcc)
elseif(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  set(_pd_cxx_id clang)
else()
  set(_pd_cxx_id "${CMAKE_CXX_COMPILER_ID}")
endif()
if(NOT _pd_cxx_major)
  set(_pd_cxx_major 0)
endif()

target_compile_definitions(pdext_jit_objects PRIVATE
  PDEXT_INSTALL_INCLUDE_DIR="${CMAKE_INSTALL_FULL_INCLUDEDIR}/pdext"
  PDEXT_SOURCE_INCLUDE_DIR="${PDEXT_INCLUDE_DIR}"
  PDEXT_BUILT_CXX_ID="${_pd_cxx_id}"
  PDEXT_BUILT_CXX_MAJOR=${_pd_cxx_major})
