# Settings of the bundle tests (bundle_test.c): `pdext bundle` end to end. The test builds
# its bundles and links its programs (tests/bundle/prog_*.c, examples/inference) at test time,
# with the compiler, the `pdext` command and the static libpdext of this build tree, because
# linking a program with various flags is the very thing under test.
pd_add_test_module(bundle_fixture_ops bundle/ops_scale.c)

if(TARGET bundle_test)
  if(TARGET pdext_cmd)
    add_dependencies(bundle_test pdext_cmd)
    target_compile_definitions(bundle_test PRIVATE PD_BUNDLE_PDEXT="$<TARGET_FILE:pdext_cmd>")
  endif()
  add_dependencies(bundle_test pdext_static pdext_jit_static bundle_fixture_ops)
  # Programs linked against the sanitized libpdext.a need the sanitizer runtime too.
  string(REPLACE ";" " " _pd_bundle_san "${PDEXT_SANITIZER_FLAGS}")
  target_compile_definitions(bundle_test PRIVATE
    PD_BUNDLE_LIBPDEXT_A="$<TARGET_FILE:pdext_static>"
    PD_BUNDLE_LIBPDEXT_JIT_A="$<TARGET_FILE:pdext_jit_static>"
    PD_BUNDLE_FIXTURE_MODULE="$<TARGET_FILE:bundle_fixture_ops>"
    PD_BUNDLE_CC="${CMAKE_C_COMPILER}"
    PD_BUNDLE_SANITIZE_FLAGS="${_pd_bundle_san}")
  target_link_libraries(bundle_test PRIVATE ${CMAKE_DL_LIBS} Threads::Threads)
endif()
