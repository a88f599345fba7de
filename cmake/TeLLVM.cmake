# TeLLVM.cmake — find LLVM 22 through llvm-config-22 and expose it as the imported target te::llvm.
#
# te uses LLVM's C API only (llvm-c/*.h), linked against the shared libLLVM-22. The version is
# pinned (DESIGN.md, "Choices made"): other majors differ in the ORC and opaque-pointer C API.
# Set TE_LLVM_CONFIG to point at another llvm-config of major 22 if it is not on PATH.

find_program(TE_LLVM_CONFIG NAMES llvm-config-22
             PATHS /usr/lib/llvm-22/bin
             DOC "llvm-config of LLVM 22")
if(NOT TE_LLVM_CONFIG)
  message(FATAL_ERROR "LLVM 22 not found: run scripts/setup.sh (needs llvm-22-dev)")
endif()

function(_te_llvm_query out)
  execute_process(COMMAND "${TE_LLVM_CONFIG}" ${ARGN}
                  OUTPUT_VARIABLE value OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "LLVM 22 not found: '${TE_LLVM_CONFIG} ${ARGN}' failed; "
                        "run scripts/setup.sh (needs llvm-22-dev)")
  endif()
  set(${out} "${value}" PARENT_SCOPE)
endfunction()

_te_llvm_query(TE_LLVM_VERSION --version)
if(NOT TE_LLVM_VERSION MATCHES "^22\\.")
  message(FATAL_ERROR "LLVM 22 not found: ${TE_LLVM_CONFIG} reports version ${TE_LLVM_VERSION}; "
                      "run scripts/setup.sh (needs llvm-22-dev)")
endif()
_te_llvm_query(TE_LLVM_INCLUDE_DIR --includedir)
_te_llvm_query(TE_LLVM_LIB_DIR --libdir)
_te_llvm_query(TE_LLVM_LIBS --libs)   # -lLLVM-22 (the shared library)

string(REGEX REPLACE "^-l" "" _te_llvm_libname "${TE_LLVM_LIBS}")
find_library(TE_LLVM_LIBRARY NAMES ${_te_llvm_libname} LLVM-22
             PATHS "${TE_LLVM_LIB_DIR}" NO_DEFAULT_PATH)
if(NOT TE_LLVM_LIBRARY OR NOT EXISTS "${TE_LLVM_INCLUDE_DIR}/llvm-c/Core.h")
  message(FATAL_ERROR "LLVM 22 not found: no lib${_te_llvm_libname}.so in ${TE_LLVM_LIB_DIR} "
                      "or no llvm-c headers in ${TE_LLVM_INCLUDE_DIR}; "
                      "run scripts/setup.sh (needs llvm-22-dev)")
endif()

add_library(te::llvm INTERFACE IMPORTED)
target_include_directories(te::llvm SYSTEM INTERFACE "${TE_LLVM_INCLUDE_DIR}")
target_link_libraries(te::llvm INTERFACE "${TE_LLVM_LIBRARY}")
message(STATUS "te: LLVM ${TE_LLVM_VERSION} (${TE_LLVM_LIBRARY})")
