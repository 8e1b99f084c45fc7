# Turns symbols/jdk-NN.txt into a C file the library carries, so that the
# agent needs no data path at run time. Invoked with -DOUT=... -DFILES=a;b
string(REPLACE "|" ";" FILES "${FILES}")
set(body "")
set(table "")
set(count 0)
foreach(f ${FILES})
  get_filename_component(name ${f} NAME)
  string(REGEX MATCH "jdk-([0-9]+)\\.txt$" _ ${name})
  set(release ${CMAKE_MATCH_1})
  file(READ ${f} hex HEX)
  string(LENGTH "${hex}" hexlen)
  math(EXPR len "${hexlen} / 2")
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
  string(APPEND body "static const char file_${count}[] = {${bytes}0};\n")
  string(APPEND table "  {\"${name}\", ${release}, file_${count}, ${len}},\n")
  math(EXPR count "${count} + 1")
endforeach()
file(WRITE ${OUT}.tmp "/* generated from symbols/ by cmake/embed_symbols.cmake */\n#include <stddef.h>\n"
  "struct hp_embedded_file { const char *name; int release; const char *text; size_t len; };\n"
  "${body}const struct hp_embedded_file hp_embedded_symbols[] = {\n${table}};\n"
  "const size_t hp_embedded_symbols_count = ${count};\n")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
