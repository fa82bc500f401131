# TilecKernel.cmake — tilec_add_kernel(): compile a .tile file to CUDA inside a CMake build.
#
#   include(TilecKernel.cmake)
#   tilec_add_kernel(my_target kernels/foo.tile [TARGET_ARCH sm_90a|sm_100a])
#
# Runs `tilec compile foo.tile -o ${CMAKE_CURRENT_BINARY_DIR}/foo.cu --depfile foo.cu.d` and adds
# the generated .cu to `my_target`'s sources (the target must exist and have CUDA enabled).
# The .cu is regenerated when the .tile changes (tilec's depfile) or the tilec binary changes.
# tilec is found through the TILEC_EXECUTABLE cache variable, else on PATH.
# TARGET_ARCH defaults to sm_90a; nvcc's architecture comes from CMAKE_CUDA_ARCHITECTURES
# (90a for sm_90a, 100a for sm_100a), which must agree with it.
cmake_minimum_required(VERSION 3.25)

find_program(TILEC_EXECUTABLE tilec DOC "path to the tilec binary")

function(tilec_add_kernel target tile_file)
  cmake_parse_arguments(PARSE_ARGV 2 TILEC "" "TARGET_ARCH" "")
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
  get_filename_component(kernel_name "${tile_file}" NAME_WE)
  set(cu_file "${CMAKE_CURRENT_BINARY_DIR}/${kernel_name}.cu")
  set(dep_file "${CMAKE_CURRENT_BINARY_DIR}/${kernel_name}.cu.d")

  add_custom_command(
    OUTPUT "${cu_file}"
    COMMAND "${TILEC_EXECUTABLE}" compile "${tile_path}" -o "${cu_file}"
            --target ${TILEC_TARGET_ARCH} --depfile "${dep_file}"
    DEPENDS "${tile_path}" "${TILEC_EXECUTABLE}"
    DEPFILE "${dep_file}"
    COMMENT "tilec: ${tile_file} -> ${kernel_name}.cu (${TILEC_TARGET_ARCH})"
    VERBATIM)
  target_sources(${target} PRIVATE "${cu_file}")
endfunction()
