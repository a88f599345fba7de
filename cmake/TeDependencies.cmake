# TeDependencies.cmake — every third-party dependency of te, found once, as imported targets.
#
#   te::llvm    LLVM 22 C API (TeLLVM.cmake)
#   OpenMP::OpenMP_C   gcc's libgomp, for the runtime's parallel-for
#   te::ffi     libffi, for te_module_call
#   te::jansson jansson, for the tuning log (found now, linked when autotune lands)
#   te::dlpack  the DLPack header (DLTensor is the kernel argument type)
# All come from Debian packages that scripts/setup.sh installs; nothing is downloaded.

include(TeLLVM)

find_package(OpenMP REQUIRED COMPONENTS C)
find_package(PkgConfig REQUIRED)

pkg_check_modules(TE_FFI REQUIRED IMPORTED_TARGET libffi)
add_library(te::ffi ALIAS PkgConfig::TE_FFI)

pkg_check_modules(TE_JANSSON REQUIRED IMPORTED_TARGET jansson)
add_library(te::jansson ALIAS PkgConfig::TE_JANSSON)

find_path(TE_DLPACK_INCLUDE_DIR dlpack/dlpack.h)
if(NOT TE_DLPACK_INCLUDE_DIR)
  message(FATAL_ERROR "dlpack/dlpack.h not found: run scripts/setup.sh (needs libdlpack-dev)")
endif()
add_library(te::dlpack INTERFACE IMPORTED)
target_include_directories(te::dlpack SYSTEM INTERFACE "${TE_DLPACK_INCLUDE_DIR}")
