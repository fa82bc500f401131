# TilecKernel.cmake — tilec_add_kernel(): compile a .tile file to CUDA inside a CMake build.
#
#   include(TilecKernel.cmake)
#   tilec_add_kernel(my_target kernels/foo.tile [TARGET_ARCH sm_90a|sm_100a] [OUTPUT name.cu]
#                    [OPTIONS tilec-option...])
#
# Runs `tilec compile kernels/foo.tile -o ${CMAKE_CURRENT_BINARY_DIR}/kernels/foo.cu --header
# kernels/foo.h --depfile kernels/foo.cu.d` and adds the .cu and the header (the launchers'
# declarations) to `my_target`'s sources (the target must exist and have CUDA enabled). The
# current binary directory goes on the target's include path: the caller writes
# #include "kernels/foo.h", and a kernel whose parameters change fails to compile at the call.
# The .cu keeps the .tile's path below the current source directory (a .tile outside it: its
# file name), so kernels/a/k.tile and kernels/b/k.tile, or attn.fwd.tile and attn.bwd.tile, get
# files of their own. OUTPUT names the .cu instead (relative to the current binary directory;
# the header is the same name with .h); OPTIONS go to tilec compile as they are (`OPTIONS -D BN=96`).
# The .cu is regenerated when the .tile changes (tilec's depfile) or the tilec binary changes.
# tilec is found through the TILEC_EXECUTABLE cache variable, else on PATH.
# TARGET_ARCH defaults to sm_90a; nvcc's architecture comes from CMAKE_CUDA_ARCHITECTURES
# (90a for sm_90a, 100a for sm_100a), which must agree with it.
cmake_minimum_required(VERSION 3.25)

find_program(TILEC_EXECUTABLE tilec DOC "path to the tilec binary")

function(tilec_add_kernel target tile_file)
  cmake_parse_arguments(PARSE_ARGV 2 TILEC "" "TARGET_ARCH;OUTPUT" "OPTIONS")
  if(TILEC_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "tilec_add_kernel: unknown arguments: ${TILEC_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT TILEC_EXECUTABLE)
    message(FATAL_ERROR "tilec_add_kernel: tilec not found; set -DTILEC_EXECUTABLE=/path/to/tilec")
  endif()
  if(NOT TILEC_TARGET_ARCH)
    set(TILEC_TARGET_ARCH sm_90a)
  endif()
  if(NOT TILEC_TARGET_ARCH MATCHES "^sm_(90a|100a)$")
    message(FATAL_ERROR "tilec_add_kernel: TARGET_ARCH must be sm_90a or sm_100a, not ${TILEC_TARGET_ARCH}")
  endif()

  get_filename_component(tile_path "${tile_file}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  if(TILEC_OUTPUT)
    set(cu_name "${TILEC_OUTPUT}")
  else()
    file(RELATIVE_PATH cu_name "${CMAKE_CURRENT_SOURCE_DIR}" "${tile_path}")
    if(cu_name MATCHES "^\\.\\./")
      get_filename_component(cu_name "${tile_path}" NAME)
    endif()
    string(REGEX REPLACE "\\.tile$" "" cu_name "${cu_name}")
    set(cu_name "${cu_name}.cu")
  endif()
  set(cu_file "${CMAKE_CURRENT_BINARY_DIR}/${cu_name}")
  set(dep_file "${cu_file}.d")
  string(REGEX REPLACE "\\.cu$" "" header_file "${cu_file}")
  set(header_file "${header_file}.h")
  get_filename_component(cu_directory "${cu_file}" DIRECTORY)
  file(MAKE_DIRECTORY "${cu_directory}")

  add_custom_command(
    OUTPUT "${cu_file}" "${header_file}"
    COMMAND "${TILEC_EXECUTABLE}" compile "${tile_path}" -o "${cu_file}" --header "${header_file}"
            --target ${TILEC_TARGET_ARCH} --depfile "${dep_file}" ${TILEC_OPTIONS}
    DEPENDS "${tile_path}" "${TILEC_EXECUTABLE}"
    DEPFILE "${dep_file}"
    COMMENT "tilec: ${tile_file} -> ${cu_name} (${TILEC_TARGET_ARCH})"
    VERBATIM)
  target_sources(${target} PRIVATE "${cu_file}" "${header_file}")
  target_include_directories(${target} PRIVATE "${CMAKE_CURRENT_BINARY_DIR}")
endfunction()
