# Settings of the JIT (jit/*.c, compiled into libpdext_jit), included by jit/CMakeLists.txt:
#   - the templates it fills (templates/build.ninja.in and the static bundle's
#     bundle_register.c.in, bundle_link.ld.in, bundle_header.h.in, bundle.pc.in, and
#     bundle_aot.c.in / bundle_aot_entry.c.in for a bundle's AOT functions) embedded as C
#     strings, so that an installed libpdext_jit needs no data files;
#   - where the SDK headers are installed, and where they are in the source tree (used when
#     libpdext runs from its build tree);
#   - the C++ compiler family and major version that built libpdext, for the JIT's
#     compiler check on C++/CUDA modules;
#   - where libpdext.a and the ONNX Runtime adapter libpdext_onnxruntime.a are in the build tree
#     and in the configured install (an ONNX Runtime library links both).
set(_pd_templates build.ninja bundle_register.c bundle_link.ld bundle_header.h bundle.pc bundle_ort.c
    bundle_ort.map bundle_aot.c bundle_aot_entry.c)
set(_pd_template_text "/* Generated from the templates/ directory by jit/jit.cmake; do not edit. */\n")
foreach(t ${_pd_templates})
  set(_src ${PROJECT_SOURCE_DIR}/templates/${t}.in)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_src})
  file(READ ${_src} _txt)
  string(REPLACE "\\" "\\\\" _txt "${_txt}")
  string(REPLACE "\"" "\\\"" _txt "${_txt}")
  string(REPLACE "\n" "\\n\"\n    \"" _txt "${_txt}")
  string(MAKE_C_IDENTIFIER "${t}.in" _id)
  if(t STREQUAL "build.ninja")
    set(_id ninja_template)
  else()
    set(_id tpl_${_id})
  endif()
  string(APPEND _pd_template_text "static const char pd__${_id}[] =\n    \"${_txt}\";\n")
endforeach()
set(_pd_template_h ${CMAKE_CURRENT_BINARY_DIR}/generated/pd_jit_template.h)
# Written through configure_file so that an unchanged template does not recompile anything.
file(WRITE ${_pd_template_h}.tmp "${_pd_template_text}")
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
  PDEXT_BUILT_CXX_MAJOR=${_pd_cxx_major}
  PDEXT_BUILD_LIB_DIR="$<TARGET_FILE_DIR:pdext_static>"
  PDEXT_INSTALL_LIB_DIR="${CMAKE_INSTALL_FULL_LIBDIR}")
# A JIT in the build tree finds the archives an ONNX Runtime library links, built.
add_dependencies(pdext_jit_objects pdext_static pdext_onnxruntime)
