# The `pdext` command's extras: where `pdext demo` finds the examples in the source tree
# (after $PDEXT_EXAMPLES_DIR and <prefix>/share/pdext/examples), and the installed examples
# themselves (sources and READMEs) that an installed `pdext demo` builds.
if(TARGET pdext_cmd)
  target_compile_definitions(pdext_cmd PRIVATE
                             PDEXT_SOURCE_EXAMPLES_DIR="${PROJECT_SOURCE_DIR}/examples")
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/relu ${PROJECT_SOURCE_DIR}/examples/concat
        DESTINATION ${CMAKE_INSTALL_DATADIR}/pdext/examples
        FILES_MATCHING PATTERN "*.c" PATTERN "*.cc" PATTERN "*.cu" PATTERN "*.h"
                       PATTERN "*.md")
