# The ASan run's own options (PDEXT_ASAN_OPTIONS, CMakeLists.txt), in the ASan build only: a
# thread holds a heap block in a dlopen'ed library's TLS while LeakSanitizer checks. With the
# runtime's default options its tracer died there ("Tracer caught signal 11": GCC 12's bug);
# with the run's, the check must find that block reachable and a really lost one lost.
if(PDEXT_SANITIZE AND NOT PDEXT_SANITIZE STREQUAL "thread")
  add_library(san_tls_module MODULE sanitizers/tls_module.c)
  target_compile_options(san_tls_module PRIVATE ${PDEXT_C_WARNINGS})
  add_executable(san_tls_probe sanitizers/tls_probe.c)
  target_compile_options(san_tls_probe PRIVATE ${PDEXT_C_WARNINGS})
  target_link_libraries(san_tls_probe PRIVATE ${CMAKE_DL_LIBS} Threads::Threads)
  add_test(NAME Sanitizers.LeakCheckBesideTlsOfADlopenedLibraryReadsBothWaysRight
           COMMAND san_tls_probe $<TARGET_FILE:san_tls_module>)
  set_tests_properties(Sanitizers.LeakCheckBesideTlsOfADlopenedLibraryReadsBothWaysRight
                       PROPERTIES ENVIRONMENT "ASAN_OPTIONS=detect_leaks=1:${PDEXT_ASAN_OPTIONS}")
endif()
