# HP_SELF_CONTAINED: the targets the normal build gets from pkg-config
# (PkgConfig::LIBELF ...) and FindZLIB, made from the static archives that
# scripts/deps.sh built in HP_DEPS_PREFIX. The rest of the build uses them
# unchanged. HP_DEP_ARCHIVES lists every archive, for libheapprobe.a.
set(HP_DEPS_INCLUDE ${HP_DEPS_PREFIX}/include)
set(HP_DEP_ARCHIVES)
function(hp_dep target lib)   # target, archive name, libraries it needs...
  set(path ${HP_DEPS_PREFIX}/lib/lib${lib}.a)
  if(NOT EXISTS ${path})
    message(FATAL_ERROR "${path} not found: run scripts/deps.sh ${HP_ARCH}")
  endif()
  add_library(${target} STATIC IMPORTED GLOBAL)
  set_target_properties(${target} PROPERTIES IMPORTED_LOCATION ${path}
    INTERFACE_INCLUDE_DIRECTORIES ${HP_DEPS_INCLUDE}
    INTERFACE_LINK_LIBRARIES "${ARGN}")
  set(HP_DEP_ARCHIVES ${HP_DEP_ARCHIVES} ${path} PARENT_SCOPE)
endfunction()

hp_dep(ZLIB::ZLIB z)
hp_dep(hp_dep_bz2 bz2)
hp_dep(PkgConfig::LZMA lzma pthread)
hp_dep(PkgConfig::LIBELF elf ZLIB::ZLIB)
# libdw.a holds libdwfl, libdwelf, libebl, the backends and libcpu too.
hp_dep(PkgConfig::LIBDW dw PkgConfig::LIBELF ZLIB::ZLIB hp_dep_bz2 PkgConfig::LZMA pthread ${CMAKE_DL_LIBS})
hp_dep(PkgConfig::LIBFFI ffi)
hp_dep(PkgConfig::XXHASH xxhash)
hp_dep(PkgConfig::PROTOBUFC protobuf-c)
if(HP_ARCH STREQUAL "aarch64")
  # clang's outline atomics' helpers, for libheapprobe.a only (zig cc links
  # its own into the .so and the command): see scripts/deps.sh.
  hp_dep(hp_dep_outline_atomics hp_outline_atomics)
  set(HP_STATIC_LOCALIZE --wildcard --localize-symbol=__aarch64_*)
endif()

# libcurl: headers only (upload.c dlopens it), from the same pinned sources.
set(CURL_INCLUDE_DIRS ${HP_DEPS_INCLUDE})
if(NOT EXISTS ${HP_DEPS_INCLUDE}/curl/curl.h)
  message(FATAL_ERROR "${HP_DEPS_INCLUDE}/curl/curl.h not found: run scripts/deps.sh ${HP_ARCH}")
endif()

# The command as a PIE, like Debian's gcc makes it by default (zig cc
# links executables at a fixed address unless told).
include(CheckPIESupported)
check_pie_supported()
