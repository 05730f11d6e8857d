# pdextInstall.cmake - what `cmake --install` puts beside the headers and libraries: the
# pkg-config file and the CMake package (pdextConfig.cmake, its version file, the functions
# pdext_add_op_library / pdext_add_bundle (pdextFunctions.cmake) and the exported
# targets pdext::pdext, pdext::pdext_static, pdext::pdext_jit and pdext::pdext_jit_static). Included by the top-level CMakeLists.txt
# after the library targets exist.
include(CMakePackageConfigHelpers)

set(PDEXT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/pdext)
set(PDEXT_INSTALL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR}/pdext)
set(PDEXT_INSTALL_BINDIR ${CMAKE_INSTALL_BINDIR})

# --- pkg-config -----------------------------------------------------------------------------
# The file is filled in two steps: everything but the prefix at configure time, the prefix at
# install time, so that it is the prefix actually installed to (`cmake --install build
# --prefix DIR` included, which the installed-SDK test uses).
set(PDEXT_PC_PREFIX "@PDEXT_INSTALLED_PREFIX@")
# A wheel is installed wherever pip puts it (a venv, ~/.local, a system site-packages), which
# is not known when it is built: its .pc files find the prefix from their own place.
if(SKBUILD)
  file(RELATIVE_PATH _pd_pc_up "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
  string(REGEX REPLACE "/$" "" _pd_pc_up "${_pd_pc_up}")
  set(PDEXT_PC_PREFIX "\${pcfiledir}/${_pd_pc_up}")
endif()
foreach(pc pdext pdext-jit)
  configure_file(${PROJECT_SOURCE_DIR}/templates/${pc}.pc.in
                 ${PROJECT_BINARY_DIR}/${pc}.pc.install @ONLY)
  install(CODE "
    set(PDEXT_INSTALLED_PREFIX \"\${CMAKE_INSTALL_PREFIX}\")
    set(pdext_pc \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig/${pc}.pc\")
    message(STATUS \"Installing: \${pdext_pc}\")
    configure_file(\"${PROJECT_BINARY_DIR}/${pc}.pc.install\" \"\${pdext_pc}\" @ONLY)
    list(APPEND CMAKE_INSTALL_MANIFEST_FILES \"\${pdext_pc}\")
  ")
endforeach()

# --- CMake package ----------------------------------------------------------------------------
install(EXPORT pdextTargets NAMESPACE pdext:: DESTINATION ${PDEXT_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/pdextConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/pdextConfig.cmake
                              INSTALL_DESTINATION ${PDEXT_CMAKE_DIR}
                              PATH_VARS PDEXT_INSTALL_INCLUDEDIR PDEXT_INSTALL_BINDIR)
# Same major version = compatible: the host API only grows within a major version.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/pdextConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/pdextConfig.cmake ${PROJECT_BINARY_DIR}/pdextConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/pdextFunctions.cmake
        DESTINATION ${PDEXT_CMAKE_DIR})
