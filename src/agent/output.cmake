# Profile writers (pprof, collapsed stacks, HTML); see docs/formats.md.
# include()d from the top-level CMakeLists.txt after hp_objects exists.
#
# The pprof encoder is generated from proto/profile.proto by protoc-c at
# build time (Debian: protobuf-c-compiler, libprotobuf-c-dev), so no
# generated code is checked in and the schema is the one place to review.

if(NOT HP_SELF_CONTAINED)   # else cmake/self-contained-deps.cmake made the target
  pkg_check_modules(PROTOBUFC REQUIRED IMPORTED_TARGET libprotobuf-c)
endif()
find_program(PROTOC_C NAMES protoc-c protoc-gen-c)
if(NOT PROTOC_C)
  message(FATAL_ERROR "protoc-c not found: install protobuf-c-compiler (scripts/setup.sh)")
endif()

set(HP_PROTO_DIR ${CMAKE_CURRENT_LIST_DIR}/../../proto)
cmake_path(ABSOLUTE_PATH HP_PROTO_DIR NORMALIZE)
set(HP_PROTO_OUT ${CMAKE_CURRENT_BINARY_DIR}/proto)
file(MAKE_DIRECTORY ${HP_PROTO_OUT})
add_custom_command(
  OUTPUT ${HP_PROTO_OUT}/profile.pb-c.c ${HP_PROTO_OUT}/profile.pb-c.h
  COMMAND ${PROTOC_C} --c_out=${HP_PROTO_OUT} --proto_path=${HP_PROTO_DIR} ${HP_PROTO_DIR}/profile.proto
  DEPENDS ${HP_PROTO_DIR}/profile.proto
  COMMENT "protoc-c proto/profile.proto"
  VERBATIM)

target_sources(hp_objects PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/writer.c
  ${CMAKE_CURRENT_LIST_DIR}/pprof.c
  ${CMAKE_CURRENT_LIST_DIR}/collapsed.c
  ${CMAKE_CURRENT_LIST_DIR}/html.c
  ${CMAKE_CURRENT_LIST_DIR}/jfr.c
  ${CMAKE_CURRENT_LIST_DIR}/text.c
  ${HP_PROTO_OUT}/profile.pb-c.c)
# PUBLIC: the tests decode profiles with the generated unpack functions.
target_include_directories(hp_objects PUBLIC ${HP_PROTO_OUT})
# m: sqrt/llround for the confidence intervals of the HTML site table.
target_link_libraries(hp_objects PUBLIC PkgConfig::PROTOBUFC ZLIB::ZLIB m)
