# The `pdext new` scaffolds (templates/new/*.in for --lang c, templates/new/<lang>/*.in for
# cuda, paddle and aot), embedded into the pdext command as C strings so that an installed
# command needs no data files. templates/new/cuda/op.c.in becomes pd_new_tpl_cuda_op_c.
# Included by cli/CMakeLists.txt.
set(_pd_new_text "/* Generated from templates/new by templates/new/embed.cmake; do not edit. */\n")
foreach(t op.c README.md check.sh cuda/op.c cuda/op.cu cuda/README.md cuda/check.sh
          paddle/op.cc paddle/README.md paddle/check.sh aot/op.cc aot/README.md aot/check.sh)
  set(_src ${CMAKE_CURRENT_LIST_DIR}/${t}.in)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_src})
  file(READ ${_src} _txt)
  string(REPLACE "\\" "\\\\" _txt "${_txt}")
  string(REPLACE "\"" "\\\"" _txt "${_txt}")
  string(REPLACE "\n" "\\n\"\n    \"" _txt "${_txt}")
  string(MAKE_C_IDENTIFIER "${t}" _id)
  string(APPEND _pd_new_text "static const char pd_new_tpl_${_id}[] =\n    \"${_txt}\";\n")
endforeach()
set(_pd_new_h ${CMAKE_CURRENT_BINARY_DIR}/generated/pd_new_templates.h)
file(WRITE ${_pd_new_h}.tmp "${_pd_new_text}")
configure_file(${_pd_new_h}.tmp ${_pd_new_h} COPYONLY)
target_include_directories(pdext_cmd PRIVATE ${CMAKE_CURRENT_BINARY_DIR}/generated)
