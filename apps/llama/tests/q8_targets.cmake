# q8_targets.cmake — te-llama's Q8_0 kernels on CPUs with and without AVX512-VNNI: the generator
# builds them for both (with vpdpbusd where the CPU has it, plain vector code of the same sums
# where it does not: gen/gen_q8.c falls back when te_build refuses the instruction).
#   cmake -DGEN=<tl_kernels_generator> -DDIR=<scratch> -P q8_targets.cmake
set(kernels tl_quantize_g64 tl_q8_matvec_g64 tl_q8_matmul_add_g16 tl_q8_matvec_add_g8)
function(generate label target expect_dot)
  execute_process(COMMAND "${GEN}" "${DIR}/q8_${label}" "${target}" ${kernels}
                  RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${label} (${target}): the generator failed (${rc}): ${err}")
  endif()
  file(READ "${DIR}/q8_${label}.s" asm)
  string(FIND "${asm}" "vpdpbusd" at)
  if(expect_dot AND at EQUAL -1)
    message(FATAL_ERROR "${label} (${target}): no vpdpbusd in the Q8_0 kernels")
  elseif(NOT expect_dot AND NOT at EQUAL -1)
    message(FATAL_ERROR "${label} (${target}): vpdpbusd on a CPU without AVX512-VNNI")
  endif()
  message(STATUS "ok ${label}: ${target}")
endfunction()
generate(vnni "llvm -mtriple=x86_64-pc-linux-gnu -mcpu=icelake-server" TRUE)
generate(no_vnni "llvm -mtriple=x86_64-pc-linux-gnu -mcpu=skylake-avx512" FALSE)
generate(avx2 "llvm -mtriple=x86_64-pc-linux-gnu -mcpu=haswell" FALSE)
