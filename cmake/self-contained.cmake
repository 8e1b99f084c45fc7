# Toolchain of the self-contained build (-DHP_SELF_CONTAINED=ON picks it):
# zig cc for <HP_ARCH>-linux-gnu.2.17 through the wrappers scripts/deps.sh
# writes beside the dependencies it built, in HP_DEPS_PREFIX.
if(NOT HP_ARCH)
  set(HP_ARCH ${CMAKE_HOST_SYSTEM_PROCESSOR})
endif()
if(HP_ARCH STREQUAL "arm64")
  set(HP_ARCH aarch64)
endif()
set(HP_ARCH ${HP_ARCH} CACHE STRING "Target of the self-contained build: x86_64 or aarch64")
if(NOT HP_DEPS_PREFIX)
  get_filename_component(HP_DEPS_PREFIX ${CMAKE_CURRENT_LIST_DIR}/../build/deps/${HP_ARCH}-linux-gnu.2.17 ABSOLUTE)
endif()
set(HP_DEPS_PREFIX ${HP_DEPS_PREFIX} CACHE PATH "scripts/deps.sh's output for HP_ARCH")
# try_compile projects read this file again: hand them the two settings.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES HP_ARCH HP_DEPS_PREFIX)
if(NOT EXISTS ${HP_DEPS_PREFIX}/bin/cc)
  message(FATAL_ERROR "${HP_DEPS_PREFIX}/bin/cc not found: run scripts/deps.sh ${HP_ARCH} first")
endif()

set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR ${HP_ARCH})
set(CMAKE_C_COMPILER ${HP_DEPS_PREFIX}/bin/cc)
set(CMAKE_AR ${HP_DEPS_PREFIX}/bin/ar CACHE FILEPATH "")
set(CMAKE_RANLIB ${HP_DEPS_PREFIX}/bin/ranlib CACHE FILEPATH "")
# libheapprobe.a's partial link (ld -r) and --localize-hidden: lld and an
# llvm-objcopy read both architectures (the host's binutils only x86).
set(CMAKE_LINKER ${HP_DEPS_PREFIX}/bin/ld CACHE FILEPATH "")
find_program(HP_LLVM_OBJCOPY NAMES llvm-objcopy llvm-objcopy-19 llvm-objcopy-16 llvm-objcopy-15 llvm-objcopy-14)
if(HP_LLVM_OBJCOPY)
  set(CMAKE_OBJCOPY ${HP_LLVM_OBJCOPY} CACHE FILEPATH "")
elseif(HP_ARCH STREQUAL CMAKE_HOST_SYSTEM_PROCESSOR)
  set(CMAKE_OBJCOPY objcopy CACHE FILEPATH "")
else()
  message(FATAL_ERROR "llvm-objcopy not found (Debian: llvm-14): needed for a ${HP_ARCH} libheapprobe.a")
endif()

# Libraries and headers from the prefix only; programs (protoc-c) from the host.
set(CMAKE_FIND_ROOT_PATH ${HP_DEPS_PREFIX})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)   # the JDK's jni.h
