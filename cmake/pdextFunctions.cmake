# pdextFunctions.cmake - CMake functions of the installed pdext package (included by
# pdextConfig.cmake), so that a project builds op libraries with the flags the JIT uses:
#
#   pdext_add_op_library(relu_op SOURCES relu.c [INCLUDE_DIRECTORIES dir...]
#                        [COMPILE_OPTIONS opt...])
#       A loadable op module librelu_op.so (a MODULE library, for pd_module_load and
#       `pdext run`): the SDK headers, position-independent code, hidden symbols (only
#       pdext_module_info is exported), C11 / C++20, libm. It does not link libpdext: a
#       module reaches the runtime through its function table.
#
#   pdext_add_bundle(myops SOURCES relu.c concat.c [INCLUDE_DIRECTORIES dir...]
#                    [COMPILE_OPTIONS opt...])
#       A static bundle, built at build time by the installed `pdext bundle` (the JIT's
#       pipeline, cached under <build>/pdext-cache) into <binary dir>/pdext_bundle_myops/:
#       libmyops.a, myops.h and myops.pc. The INTERFACE target `myops` carries all a program
#       needs: target_link_libraries(app PRIVATE myops), then #include "myops.h" and call
#       pd_bundle_register_myops(reg, &module). It links pdext::pdext_static and the
#       libraries the bundle's code needs (libm; libstdc++ for C++ sources; the CUDA runtime
#       for .cu sources).
#       AOT file.cc:Func --inputs N [--attr "scale: float" ...] ... adds MindSpore AOT functions
#       (each FILE:FUNC followed by its options, given to `pdext bundle` as they are; a relative
#       FILE is taken against the current source directory). A bundle with AOT functions links
#       pdext::pdext_aot and the shared pdext::pdext instead (libpdext_aot is a shared library).
#   pdext_add_bundle(myops ONNXRUNTIME [DOMAIN name] SOURCES relu.c concat.c ... [AOT ...])
#       An ONNX Runtime custom-op library instead (`pdext bundle --onnxruntime`):
#       <binary dir>/pdext_bundle_myops/libmyops.so, built with the target `myops` (part of
#       ALL), whose property PDEXT_ONNXRUNTIME_LIBRARY holds its path for
#       SessionOptions.register_custom_ops_library / RegisterCustomOpsLibrary. Its ops are in
#       the ONNX domain DOMAIN (default pdext). AOT functions go inside it with the AOT
#       adapter (the library still needs no pdext library at run time).
include_guard(GLOBAL)

# Absolute paths of `paths`, relative ones taken against the current source directory.
function(_pdext_absolute out)
  set(result)
  foreach(p ${ARGN})
    get_filename_component(a "${p}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND result "${a}")
  endforeach()
  set(${out} "${result}" PARENT_SCOPE)
endfunction()

function(pdext_add_op_library name)
  cmake_parse_arguments(PARSE_ARGV 1 _pd "" "" "SOURCES;INCLUDE_DIRECTORIES;COMPILE_OPTIONS")
  if(NOT _pd_SOURCES)
    message(FATAL_ERROR "pdext_add_op_library(${name}): give the op sources: SOURCES a.c ...")
  endif()
  add_library(${name} MODULE ${_pd_SOURCES})
  target_include_directories(${name} PRIVATE ${pdext_INCLUDE_DIR} ${_pd_INCLUDE_DIRECTORIES})
  set_target_properties(${name} PROPERTIES
    C_STANDARD 11 C_EXTENSIONS ON CXX_STANDARD 20 CXX_EXTENSIONS OFF
    POSITION_INDEPENDENT_CODE ON
    C_VISIBILITY_PRESET hidden CXX_VISIBILITY_PRESET hidden CUDA_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  if(_pd_COMPILE_OPTIONS)
    target_compile_options(${name} PRIVATE ${_pd_COMPILE_OPTIONS})
  endif()
  target_link_libraries(${name} PRIVATE m)
endfunction()

function(pdext_add_bundle name)
  cmake_parse_arguments(PARSE_ARGV 1 _pd "ONNXRUNTIME" "DOMAIN"
                        "SOURCES;INCLUDE_DIRECTORIES;COMPILE_OPTIONS;AOT")
  if(NOT _pd_SOURCES AND NOT _pd_AOT)
    message(FATAL_ERROR "pdext_add_bundle(${name}): give the op sources: SOURCES a.c ... "
                        "(or AOT file.cc:Func --inputs N ...)")
  endif()
  # FILE:FUNC arguments made absolute; their options pass as they are.
  set(aot)
  set(aot_files)
  foreach(a IN LISTS _pd_AOT)
    if(a MATCHES "^([^-].*\\.(cc|cpp|cxx|c|cu)):([A-Za-z_][A-Za-z0-9_]*)$")
      get_filename_component(f "${CMAKE_MATCH_1}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
      list(APPEND aot "${f}:${CMAKE_MATCH_3}")
      list(APPEND aot_files "${f}")
    else()
      list(APPEND aot "${a}")
    endif()
  endforeach()
  if(NOT name MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR "pdext_add_bundle(${name}): the name must be a C identifier (it "
                        "names pd_bundle_register_${name})")
  endif()
  if(NOT EXISTS "${pdext_EXECUTABLE}")
    message(FATAL_ERROR "pdext_add_bundle(${name}): the pdext command is not installed at "
                        "${pdext_EXECUTABLE}")
  endif()
  _pdext_absolute(sources ${_pd_SOURCES})
  _pdext_absolute(includes ${_pd_INCLUDE_DIRECTORIES})
  set(dir "${CMAKE_CURRENT_BINARY_DIR}/pdext_bundle_${name}")
  set(archive "${dir}/lib${name}.a")
  set(args)
  foreach(i ${includes})
    list(APPEND args -I "${i}")
  endforeach()
  if(_pd_COMPILE_OPTIONS)
    string(JOIN " " opts ${_pd_COMPILE_OPTIONS})
    list(APPEND args --cflags "${opts}" --cxxflags "${opts}")
  endif()
  if(_pd_ONNXRUNTIME)
    set(library "${dir}/lib${name}.so")
    if(_pd_DOMAIN)
      list(APPEND args --domain "${_pd_DOMAIN}")
    endif()
    add_custom_command(
      OUTPUT "${library}"
      COMMAND ${CMAKE_COMMAND} -E make_directory "${dir}"
      COMMAND ${CMAKE_COMMAND} -E env "PDEXT_CACHE_DIR=${CMAKE_BINARY_DIR}/pdext-cache"
              "${pdext_EXECUTABLE}" bundle --onnxruntime -o "${library}" --name ${name} ${args}
              ${sources} ${aot}
      DEPENDS ${sources} ${aot_files}
      COMMENT "pdext bundle --onnxruntime ${name}"
      VERBATIM)
    add_custom_target(${name} ALL DEPENDS "${library}")
    set_target_properties(${name} PROPERTIES PDEXT_ONNXRUNTIME_LIBRARY "${library}")
    return()
  endif()
  add_custom_command(
    OUTPUT "${archive}" "${dir}/${name}.h" "${dir}/${name}.pc"
    COMMAND ${CMAKE_COMMAND} -E make_directory "${dir}"
    COMMAND ${CMAKE_COMMAND} -E env "PDEXT_CACHE_DIR=${CMAKE_BINARY_DIR}/pdext-cache"
            "${pdext_EXECUTABLE}" bundle -o "${archive}" --name ${name} ${args} ${sources} ${aot}
    DEPENDS ${sources} ${aot_files}
    COMMENT "pdext bundle ${name}"
    VERBATIM)
  add_custom_target(${name}_pdext_bundle DEPENDS "${archive}" "${dir}/${name}.h")
  add_library(${name} INTERFACE)
  # Followed transitively: whatever links ${name} waits for the bundle and its header.
  add_dependencies(${name} ${name}_pdext_bundle)
  target_include_directories(${name} INTERFACE "${dir}")
  if(aot)
    set(libs "${archive}" pdext::pdext_aot pdext::pdext m stdc++)
  else()
    set(libs "${archive}" pdext::pdext_static m)
  endif()
  if(sources MATCHES "\\.(cc|cpp|cxx|cu)(;|$)")
    list(APPEND libs stdc++)
  endif()
  if("${sources};${aot_files}" MATCHES "\\.cu(;|$)")
    list(APPEND libs cudart)
  endif()
  target_link_libraries(${name} INTERFACE ${libs})
endfunction()
