# run_downstream.cmake — install te into a temporary prefix and use it as a downstream project.
#   cmake -DTE_BUILD_DIR=<te build> -DTE_SOURCE_DIR=<te source> -DWORK_DIR=<scratch>
#         -DCMAKE_GENERATOR=<generator> -DC_COMPILER=<cc> -P run_downstream.cmake
# 1. cmake --install <te build> --prefix <work>/prefix
# 2. configure, build and run downstream/ with CMAKE_PREFIX_PATH=<work>/prefix: find_package(te),
#    JIT programs linked with te::te and te::te_static, and a kernel library made by te_add_kernel_library (its
#    program links only the library and the static libte_runtime)
# 3. the same two programs compiled by hand with `pkg-config --cflags --libs te` / `te_runtime`
foreach(v TE_BUILD_DIR TE_SOURCE_DIR WORK_DIR C_COMPILER)
  if(NOT ${v})
    message(FATAL_ERROR "run_downstream: ${v} is not set")
  endif()
endforeach()

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${ARGN}")
    message(FATAL_ERROR "run_downstream: '${cmd}' failed (${rc}):\n${out}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")
run("${CMAKE_COMMAND}" --install "${TE_BUILD_DIR}" --prefix "${prefix}")
foreach(f include/te/te.h include/te/runtime.h)
  if(NOT EXISTS "${prefix}/${f}")
    message(FATAL_ERROR "run_downstream: ${f} was not installed")
  endif()
endforeach()
file(GLOB_RECURSE config "${prefix}/*/te-config.cmake")
file(GLOB_RECURSE te_pc "${prefix}/*/te.pc")
file(GLOB_RECURSE runtime_a "${prefix}/*/libte_runtime.a")
if(NOT config OR NOT te_pc OR NOT runtime_a)
  message(FATAL_ERROR "run_downstream: te-config.cmake, te.pc or libte_runtime.a missing")
endif()
get_filename_component(libdir "${runtime_a}" DIRECTORY)
message(STATUS "installed into ${prefix} (libraries in ${libdir})")

# -- find_package(te)
set(build "${WORK_DIR}/build")
set(gen_args "")
if(CMAKE_GENERATOR)
  set(gen_args -G "${CMAKE_GENERATOR}")
endif()
run("${CMAKE_COMMAND}" -S "${TE_SOURCE_DIR}/test/install/downstream" -B "${build}" ${gen_args}
    "-DCMAKE_PREFIX_PATH=${prefix}" "-DCMAKE_C_COMPILER=${C_COMPILER}"
    -DCMAKE_BUILD_TYPE=Release)
run("${CMAKE_COMMAND}" --build "${build}" -j2)
run("${build}/use_jit")
message(STATUS "find_package(te), JIT: ${last_output}")
run("${build}/use_jit_static")
message(STATUS "find_package(te), static libte, JIT: ${last_output}")
run("${build}/use_aot")
message(STATUS "find_package(te), te_add_kernel_library: ${last_output}")
run(ldd "${build}/use_aot")
if(last_output MATCHES "libLLVM|libte\\.so|libte_runtime")
  message(FATAL_ERROR "run_downstream: use_aot should need neither libte, LLVM nor the shared "
                      "runtime:\n${last_output}")
endif()

# -- pkg-config, as a Makefile user would
find_program(PKG_CONFIG pkg-config REQUIRED)
set(ENV{PKG_CONFIG_PATH} "${libdir}/pkgconfig")
run("${PKG_CONFIG}" --cflags --libs te)
string(STRIP "${last_output}" te_flags)
separate_arguments(te_flags UNIX_COMMAND "${te_flags}")
run("${C_COMPILER}" -std=c11 "${TE_SOURCE_DIR}/test/install/downstream/use_jit.c" ${te_flags}
    -o "${WORK_DIR}/pc_jit")
set(ENV{LD_LIBRARY_PATH} "${libdir}")
run("${WORK_DIR}/pc_jit")
message(STATUS "pkg-config te, JIT: ${last_output}")
run("${PKG_CONFIG}" --cflags --libs te_runtime)
string(STRIP "${last_output}" rt_flags)
separate_arguments(rt_flags UNIX_COMMAND "${rt_flags}")
file(GLOB_RECURSE dkern_a "${build}/*/libdkern.a")
get_filename_component(dkern_dir "${dkern_a}" DIRECTORY)
run("${C_COMPILER}" -std=c11 "${TE_SOURCE_DIR}/test/install/downstream/use_aot.c"
    "-I${dkern_dir}" "${dkern_a}" ${rt_flags} -o "${WORK_DIR}/pc_aot")
run("${WORK_DIR}/pc_aot")
message(STATUS "pkg-config te_runtime, kernel library: ${last_output}")
run(ldd "${WORK_DIR}/pc_aot")
if(last_output MATCHES "libLLVM|libte\\.so")
  message(FATAL_ERROR "run_downstream: pc_aot should need neither libte nor LLVM:\n"
                      "${last_output}")
endif()
file(REMOVE_RECURSE "${WORK_DIR}")
message(STATUS "run_downstream: all good")
