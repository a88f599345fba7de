# cli.cmake — te-llama's command line against te-llama-ref's (the plain C reference) on a random
# checkpoint, and its refusals of bad input.
#   cmake -DTL=<te-llama> -DREF=<te-llama-ref> -DGEN=<te-llama-make-checkpoint> -DDIR=<scratch>
#         -P cli.cmake
# Checks: -t 0 generation prints the same text (legacy, Q8_0 and bf16 files, a prompt and none);
# -t 0.8 -p 0.9 -s 42 sampling too (same seed, same draws); chat mode with -i and -y; stderr has
# "achieved tok/s:"; bad flags, a missing checkpoint or tokenizer and a truncated checkpoint
# exit 1 with a message naming the problem.
set(ckpt "${DIR}/cli.bin")
set(q8 "${DIR}/cli_q8.bin")
set(bf16 "${DIR}/cli_bf16.bin")
set(tok "${DIR}/cli_tok.bin")
execute_process(COMMAND "${GEN}" --config tiny --seq 64 --seed 4 --unshared --out "${ckpt}" --tokenizer "${tok}"
                RESULT_VARIABLE rc)
execute_process(COMMAND "${GEN}" --config tiny --seq 64 --seed 4 --unshared --format q8 --group-size 8 --out "${q8}"
                RESULT_VARIABLE rc2)
execute_process(COMMAND "${GEN}" --config tiny --seq 64 --seed 4 --unshared --format bf16 --out "${bf16}"
                RESULT_VARIABLE rc3)
if(rc OR rc2 OR rc3)
  message(FATAL_ERROR "te-llama-make-checkpoint failed")
endif()

function(same label)
  execute_process(COMMAND "${TL}" ${ARGN} OUTPUT_VARIABLE out_te ERROR_VARIABLE err_te
                  RESULT_VARIABLE rc_te)
  execute_process(COMMAND "${REF}" ${ARGN} OUTPUT_VARIABLE out_ref ERROR_VARIABLE err_ref
                  RESULT_VARIABLE rc_ref)
  if(NOT rc_te EQUAL 0 OR NOT rc_ref EQUAL 0)
    message(FATAL_ERROR "${label}: exit ${rc_te} / ${rc_ref}: ${err_te} ${err_ref}")
  endif()
  if(NOT out_te STREQUAL out_ref)
    message(FATAL_ERROR "${label}: te-llama printed\n[${out_te}]\nte-llama-ref printed\n[${out_ref}]")
  endif()
  string(LENGTH "${out_te}" len)
  message(STATUS "ok ${label}: same ${len} bytes")
  set(last_err "${err_te}" PARENT_SCOPE)
endfunction()

same("greedy, prompt" "${ckpt}" -z "${tok}" -t 0 -n 60 -i "once upon a time there was")
if(NOT last_err MATCHES "achieved tok/s: ([0-9]|inf)")
  message(FATAL_ERROR "no 'achieved tok/s:' on stderr: ${last_err}")
endif()
same("greedy, no prompt" "${ckpt}" -z "${tok}" -t 0 -n 30)
same("sampling -t 0.8 -p 0.9 -s 42" "${ckpt}" -z "${tok}" -t 0.8 -p 0.9 -s 42 -n 60 -i "a cat")
same("sampling -t 1 -p 1 -s 7" "${ckpt}" -z "${tok}" -t 1 -p 1 -s 7 -n 40 -i "the dog")
same("steps shorter than the prompt" "${ckpt}" -z "${tok}" -t 0 -n 3 -i "once upon a time")
same("Q8_0 greedy" "${q8}" -z "${tok}" -t 0 -n 60 -i "once upon a time")
same("bf16 greedy" "${bf16}" -z "${tok}" -t 0 -n 60 -i "once upon a time")
same("chat" "${ckpt}" -z "${tok}" -t 0 -n 50 -m chat -i "hello" -y "be brief")

function(refused label expect)
  execute_process(COMMAND "${TL}" ${ARGN} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 1 OR NOT err MATCHES "${expect}")
    message(FATAL_ERROR "${label}: exit ${rc}, stderr [${err}], expected 1 and '${expect}'")
  endif()
  string(REGEX MATCH "^[^\n]*" first "${err}")
  message(STATUS "ok ${label} refused: ${first}")
endfunction()

refused("no checkpoint" "no checkpoint given")
refused("an unknown flag" "unknown option '-q'" "${ckpt}" -q 1)
refused("a long flag" "one dash and one letter, not '--temp'" "${ckpt}" --temp 1)
refused("a flag without its value" "needs a value: '-n'" "${ckpt}" -z "${tok}" -n)
refused("-t not a number" "-t needs a number, got 'hot'" "${ckpt}" -t hot)
refused("-n not a number" "-n needs a number, got '12x'" "${ckpt}" -n 12x)
refused("a bad mode" "-m is generate or chat, not 'talk'" "${ckpt}" -m talk)
refused("a missing checkpoint" "nope.bin: cannot open" "${DIR}/nope.bin")
refused("a missing tokenizer" "cannot open the tokenizer" "${ckpt}" -z "${DIR}/nope_tok.bin")
execute_process(COMMAND head -c 1000 "${ckpt}" OUTPUT_FILE "${DIR}/cli_cut.bin")
refused("a truncated checkpoint" "truncated: 1000 bytes" "${DIR}/cli_cut.bin" -z "${tok}")
execute_process(COMMAND head -c 5000 "${tok}" OUTPUT_FILE "${DIR}/cli_tok_cut.bin")
refused("a truncated tokenizer" "truncated" "${ckpt}" -z "${DIR}/cli_tok_cut.bin")
