# TeKernelLibrary.cmake — te_add_kernel_library(): te kernels compiled ahead of time, as part of
# a CMake build, into a static library that a program links without te or LLVM at run time.
#
#   te_add_kernel_library(<name> GENERATOR <gen.c> [<more generator sources>...]
#                         [TARGET "<te target string>"]      default "llvm" (this machine)
#                         [KERNELS <kernel>...]               passed to the generator
#                         [RUNTIME SHARED|STATIC]             which libte_runtime (default SHARED)
#                         [OUTPUT_DIRECTORY <dir>]            default <binary dir>/te_kernels/<name>
#                         [GENERATOR_ARGS <arg>...]           passed after the kernels
#                         [DEPENDS <file>...])                more inputs (a tuning log, say)
#
# builds the generator (a small C program using te's API, linked with libte), runs it at build
# time as
#     <generator> <dir>/<name> "<target string>" [<kernel>...] [<generator arg>...]
# and expects it to write <dir>/lib<name>.a and <dir>/<name>.h, normally with
#     te_modules_save(ctx, n, modules, argv[1], TE_SAVE_STATIC_LIB | TE_SAVE_HEADER);
# The result is a linkable target <name> (a static IMPORTED library) whose include directory
# holds <name>.h and whose link interface brings libte_runtime (and libm): programs just
#     target_link_libraries(app PRIVATE <name>)
# The library is regenerated when the generator changes. Also defined: <name>_generator (the
# executable) and <name>_generate (the custom target that runs it).
#
# Works in te's own tree and from an installed te (find_package(te) includes this file): both
# provide the targets te::te and te::te_runtime / te::te_runtime_static.
include_guard(GLOBAL)

function(te_add_kernel_library name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "TARGET;RUNTIME;OUTPUT_DIRECTORY"
                        "GENERATOR;KERNELS;GENERATOR_ARGS;DEPENDS")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "te_add_kernel_library(${name}): unknown arguments: "
                        "${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT name MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR "te_add_kernel_library: the name '${name}' must be a C identifier "
                        "(it names lib<name>.a and <name>.h)")
  endif()
  if(NOT arg_GENERATOR)
    message(FATAL_ERROR "te_add_kernel_library(${name}): GENERATOR <source.c> is required")
  endif()
  if(NOT TARGET te::te)
    message(FATAL_ERROR "te_add_kernel_library(${name}): target te::te not found "
                        "(find_package(te) first)")
  endif()
  if(NOT DEFINED arg_TARGET OR arg_TARGET STREQUAL "")
    set(arg_TARGET "llvm")
  endif()
  if(NOT arg_RUNTIME)
    set(arg_RUNTIME SHARED)
  endif()
  if(arg_RUNTIME STREQUAL "SHARED")
    set(runtime te::te_runtime)
  elseif(arg_RUNTIME STREQUAL "STATIC")
    set(runtime te::te_runtime_static)
  else()
    message(FATAL_ERROR "te_add_kernel_library(${name}): RUNTIME must be SHARED or STATIC "
                        "(got '${arg_RUNTIME}')")
  endif()
  if(arg_OUTPUT_DIRECTORY)
    get_filename_component(dir "${arg_OUTPUT_DIRECTORY}" ABSOLUTE
                           BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
  else()
    set(dir "${CMAKE_CURRENT_BINARY_DIR}/te_kernels/${name}")
  endif()
  file(MAKE_DIRECTORY "${dir}")  # an imported target's include directory must exist

  set(gen ${name}_generator)
  add_executable(${gen} ${arg_GENERATOR})
  target_link_libraries(${gen} PRIVATE te::te)

  set(lib "${dir}/lib${name}.a")
  set(hdr "${dir}/${name}.h")
  # The generator is the user's build tool, run at build time: should it be built with
  # LeakSanitizer, a leak of its own must not fail the build (te's are caught by its tests).
  add_custom_command(
    OUTPUT "${lib}" "${hdr}"
    COMMAND "${CMAKE_COMMAND}" -E env ASAN_OPTIONS=detect_leaks=0
            "$<TARGET_FILE:${gen}>" "${dir}/${name}" "${arg_TARGET}" ${arg_KERNELS}
            ${arg_GENERATOR_ARGS}
    DEPENDS ${gen} ${arg_DEPENDS}
    COMMENT "te: generating kernel library ${name} (${arg_TARGET})"
    VERBATIM)
  add_custom_target(${name}_generate DEPENDS "${lib}" "${hdr}")

  add_library(${name} STATIC IMPORTED GLOBAL)
  set_target_properties(${name} PROPERTIES
    IMPORTED_LOCATION "${lib}"
    INTERFACE_INCLUDE_DIRECTORIES "${dir}"
    INTERFACE_LINK_LIBRARIES "${runtime};m")
  add_dependencies(${name} ${name}_generate)
endfunction()
