# ELF symbol index tests and fixtures (see symtab.cmake owner notes)
#
# The fixtures are small ELF files built here with the machine's compiler
# and binutils, one per way hp_symtab_open() can find symbols (or refuse
# them). Their paths reach the test as compile definitions.

find_program(HP_READELF NAMES readelf)
find_program(HP_XZ NAMES xz)
set(HP_OBJCOPY ${CMAKE_OBJCOPY})
set(HP_STRIP ${CMAKE_STRIP})
set(HP_NM ${CMAKE_NM})
if(NOT HP_OBJCOPY)
  find_program(HP_OBJCOPY NAMES objcopy REQUIRED)
endif()
if(NOT HP_STRIP)
  find_program(HP_STRIP NAMES strip REQUIRED)
endif()
if(NOT HP_NM)
  find_program(HP_NM NAMES nm REQUIRED)
endif()
if(NOT HP_READELF)
  message(FATAL_ERROR "readelf is needed to build the symtab fixtures")
endif()

set(FX ${CMAKE_CURRENT_BINARY_DIR}/symtab_fx)
set(FX_SRC ${CMAKE_CURRENT_LIST_DIR}/fixtures/symtab_fx.c ${CMAKE_CURRENT_LIST_DIR}/fixtures/symtab_fx2.c)
set(FX_CC ${CMAKE_C_COMPILER})
# -O1 without -g: the debug files still get .symtab; -fno-lto keeps statics.
set(FX_CFLAGS -shared -fPIC -O1 -fno-lto)
file(MAKE_DIRECTORY ${FX})

# lib: the library with .symtab; v2: same layout, other code, other build-id.
# nobid: no build-id, so .gnu_debuglink must be checked by CRC32.
add_custom_command(OUTPUT ${FX}/libhpfx.so ${FX}/libhpfx_v2.so
    ${FX}/libhpfx_nobid.so ${FX}/libhpfx_nobid_v2.so
  COMMAND ${FX_CC} ${FX_CFLAGS} -Wl,--build-id=sha1 -o ${FX}/libhpfx.so ${FX_SRC}
  COMMAND ${FX_CC} ${FX_CFLAGS} -Wl,--build-id=sha1 -DHP_FX_VARIANT=2 -o ${FX}/libhpfx_v2.so ${FX_SRC}
  COMMAND ${FX_CC} ${FX_CFLAGS} -Wl,--build-id=none -o ${FX}/libhpfx_nobid.so ${FX_SRC}
  COMMAND ${FX_CC} ${FX_CFLAGS} -Wl,--build-id=none -DHP_FX_VARIANT=2 -o ${FX}/libhpfx_nobid_v2.so ${FX_SRC}
  DEPENDS ${FX_SRC}
  COMMENT "symtab fixtures: libraries" VERBATIM)

# nm's view, the reference for addresses and sizes.
add_custom_command(OUTPUT ${FX}/libhpfx.nm
  COMMAND sh -c "\"$0\" -S --defined-only \"$1\" > \"$2\"" ${HP_NM} ${FX}/libhpfx.so ${FX}/libhpfx.nm
  DEPENDS ${FX}/libhpfx.so VERBATIM)

# Separate debug files, stripped copies, and the debug trees:
#   debugroot/: the right debug file under libhpfx's build-id
#   badroot/:   libhpfx_v2's debug file under libhpfx's build-id (refused)
#   emptyroot/: nothing (keeps build-id lookups from succeeding)
# libhpfx_link.so / libhpfx_nobid_link.so carry a .gnu_debuglink; the test
# lays them out beside / in .debug/ / under a root at run time.
add_custom_command(OUTPUT ${FX}/libhpfx.debug ${FX}/libhpfx_v2.debug
    ${FX}/libhpfx_nobid.debug ${FX}/libhpfx_nobid_v2.debug
    ${FX}/libhpfx_bid.so ${FX}/libhpfx_link.so ${FX}/libhpfx_link.debug
    ${FX}/libhpfx_nobid_link.so ${FX}/libhpfx.buildid
    ${FX}/debugroot/.stamp ${FX}/badroot/.stamp ${FX}/emptyroot/.stamp
  COMMAND ${HP_OBJCOPY} --only-keep-debug libhpfx.so libhpfx.debug
  COMMAND ${HP_OBJCOPY} --only-keep-debug libhpfx_v2.so libhpfx_v2.debug
  COMMAND ${HP_OBJCOPY} --only-keep-debug libhpfx_nobid.so libhpfx_nobid.debug
  COMMAND ${HP_OBJCOPY} --only-keep-debug libhpfx_nobid_v2.so libhpfx_nobid_v2.debug
  COMMAND ${HP_STRIP} --strip-all -o libhpfx_bid.so libhpfx.so
  COMMAND ${CMAKE_COMMAND} -E copy libhpfx.debug libhpfx_link.debug
  COMMAND ${HP_OBJCOPY} --strip-all --add-gnu-debuglink=libhpfx_link.debug libhpfx.so libhpfx_link.so
  COMMAND ${HP_OBJCOPY} --strip-all --add-gnu-debuglink=libhpfx_nobid.debug libhpfx_nobid.so libhpfx_nobid_link.so
  COMMAND ${CMAKE_COMMAND} -DREADELF=${HP_READELF} -DELF=libhpfx.so -DDEBUG=libhpfx.debug
    -DROOT=${FX}/debugroot -DIDFILE=${FX}/libhpfx.buildid -P ${CMAKE_CURRENT_LIST_DIR}/fixtures/mkdebugroot.cmake
  COMMAND ${CMAKE_COMMAND} -DREADELF=${HP_READELF} -DELF=libhpfx.so -DDEBUG=libhpfx_v2.debug
    -DROOT=${FX}/badroot -P ${CMAKE_CURRENT_LIST_DIR}/fixtures/mkdebugroot.cmake
  COMMAND ${CMAKE_COMMAND} -E make_directory ${FX}/emptyroot
  COMMAND ${CMAKE_COMMAND} -E touch ${FX}/debugroot/.stamp ${FX}/badroot/.stamp ${FX}/emptyroot/.stamp
  WORKING_DIRECTORY ${FX}
  DEPENDS ${FX}/libhpfx.so ${FX}/libhpfx_v2.so ${FX}/libhpfx_nobid.so ${FX}/libhpfx_nobid_v2.so
    ${CMAKE_CURRENT_LIST_DIR}/fixtures/mkdebugroot.cmake
  COMMENT "symtab fixtures: debug files" VERBATIM)

set(FX_OUTPUTS ${FX}/libhpfx.nm ${FX}/libhpfx_bid.so ${FX}/emptyroot/.stamp)

# MiniDebugInfo, built the Fedora way; needs xz.
if(HP_XZ)
  add_custom_command(OUTPUT ${FX}/libhpfx_mini.so
    COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/fixtures/mkminidebuginfo.sh ${HP_NM} ${HP_OBJCOPY} ${HP_XZ}
      ${FX}/libhpfx.so ${FX}/libhpfx_mini.so ${FX}/mini.work
    DEPENDS ${FX}/libhpfx.so ${CMAKE_CURRENT_LIST_DIR}/fixtures/mkminidebuginfo.sh
    COMMENT "symtab fixtures: MiniDebugInfo" VERBATIM)
  list(APPEND FX_OUTPUTS ${FX}/libhpfx_mini.so)
  set(FX_MINI ${FX}/libhpfx_mini.so)
else()
  message(STATUS "xz not found: the MiniDebugInfo test will be skipped")
  set(FX_MINI "")
endif()

# Broken inputs: an ELF cut inside its program headers, and text.
add_custom_command(OUTPUT ${FX}/truncated.so ${FX}/notelf.txt
  COMMAND sh -c "head -c 300 \"$0\" > \"$1\"" ${FX}/libhpfx.so ${FX}/truncated.so
  COMMAND sh -c "echo 'this is not an ELF file' > \"$0\"" ${FX}/notelf.txt
  DEPENDS ${FX}/libhpfx.so VERBATIM)
list(APPEND FX_OUTPUTS ${FX}/truncated.so)

# A 32-bit relocatable object, for the ELFCLASS32 path, if the compiler
# can target i386 (it needs no headers or libraries for -c).
execute_process(COMMAND ${FX_CC} -m32 -c -x c /dev/null -o ${CMAKE_CURRENT_BINARY_DIR}/m32check.o
  RESULT_VARIABLE m32_rc OUTPUT_QUIET ERROR_QUIET)
if(m32_rc EQUAL 0)
  add_custom_command(OUTPUT ${FX}/fx32.o
    COMMAND ${FX_CC} -m32 -O1 -c -o ${FX}/fx32.o ${CMAKE_CURRENT_LIST_DIR}/fixtures/symtab_fx.c
    DEPENDS ${CMAKE_CURRENT_LIST_DIR}/fixtures/symtab_fx.c VERBATIM)
  list(APPEND FX_OUTPUTS ${FX}/fx32.o)
  set(FX_ELF32 ${FX}/fx32.o)
else()
  set(FX_ELF32 "")
endif()

add_custom_target(symtab_fixtures DEPENDS ${FX_OUTPUTS})

hp_unit_test(test_symtab)
add_dependencies(test_symtab symtab_fixtures)
target_compile_definitions(test_symtab PRIVATE
  HP_FX_DIR="${FX}"
  HP_FX_LIB="${FX}/libhpfx.so"
  HP_FX_NM="${FX}/libhpfx.nm"
  HP_FX_BUILDID="${FX}/libhpfx.buildid"
  HP_FX_STRIPPED="${FX}/libhpfx_bid.so"
  HP_FX_DEBUGROOT="${FX}/debugroot"
  HP_FX_BADROOT="${FX}/badroot"
  HP_FX_EMPTYROOT="${FX}/emptyroot"
  HP_FX_LINK="${FX}/libhpfx_link.so"
  HP_FX_LINK_DEBUG="${FX}/libhpfx_link.debug"
  HP_FX_V2_DEBUG="${FX}/libhpfx_v2.debug"
  HP_FX_NOBID_LINK="${FX}/libhpfx_nobid_link.so"
  HP_FX_NOBID_DEBUG="${FX}/libhpfx_nobid.debug"
  HP_FX_NOBID_V2_DEBUG="${FX}/libhpfx_nobid_v2.debug"
  HP_FX_MINI="${FX_MINI}"
  HP_FX_TRUNCATED="${FX}/truncated.so"
  HP_FX_NOTELF="${FX}/notelf.txt"
  HP_FX_ELF32="${FX_ELF32}"
  HP_LIBJVM="/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so")
