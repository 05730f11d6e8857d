# install.cmake - the installed-SDK check (tests/install_test.sh) as a ctest test, run against a
# staged install of this build tree (`cmake --install <build> --prefix <build>/tests/install-stage`).
# `./setup.sh test` also runs the script against the real prefix after installing.
#
# Not in the sanitizer build: its libpdext needs the ASan runtime loaded first, which the
# plain host programs the check builds do not have.
if(NOT PDEXT_SANITIZE)
  find_program(PD_BASH bash)
  if(PD_BASH)
    add_test(NAME Install.HostsBuiltAgainstTheInstalledSdkRunTheExamples
             COMMAND ${PD_BASH} ${CMAKE_SOURCE_DIR}/tests/install_test.sh --stage
                     ${CMAKE_BINARY_DIR} ${CMAKE_CURRENT_BINARY_DIR}/install-stage)
    set_tests_properties(Install.HostsBuiltAgainstTheInstalledSdkRunTheExamples PROPERTIES
                         TIMEOUT 300 LABELS install)
  endif()
endif()
