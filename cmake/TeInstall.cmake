# TeInstall.cmake — `cmake --install`: headers, libraries, the CMake package and pkg-config files.
#
#   include/te/*.h                         the public headers (te/runtime.h among them)
#   lib/libte.so*, libte.a                 the compiler (libte.a needs LLVM 22, libffi, OpenMP)
#   lib/libte_runtime.so*, libte_runtime.a what generated kernels call (OpenMP only, no LLVM)
#   lib/cmake/te/                          te-config.cmake, te-config-version.cmake,
#                                          te-targets*.cmake, TeKernelLibrary.cmake
#   lib/pkgconfig/te.pc, te_runtime.pc
#
# find_package(te) gives te::te, te::te_static, te::te_runtime, te::te_runtime_static and
# te_add_kernel_library(). Everything is relocatable: the package files find the prefix from
# their own location (the exported targets' _IMPORT_PREFIX, pkg-config's ${pcfiledir}), so
# `cmake --install build --prefix <anywhere>` works without reconfiguring.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(TE_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/te")

# The installed libte finds the libte_runtime installed beside it.
set_target_properties(te PROPERTIES INSTALL_RPATH "$ORIGIN")

install(TARGETS te te_static te_runtime te_runtime_static te_headers
        EXPORT te-targets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY include/te DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT te-targets NAMESPACE te:: DESTINATION ${TE_INSTALL_CMAKEDIR})

# What the package recreates for the exported targets' interfaces: the DLPack include directory,
# and the libraries the static libte needs (LLVM 22, libffi), as found for this build.
get_target_property(TE_FFI_LINK PkgConfig::TE_FFI INTERFACE_LINK_LIBRARIES)
if(NOT TE_FFI_LINK)
  set(TE_FFI_LINK ffi)
endif()
configure_package_config_file(cmake/te-config.cmake.in
  "${CMAKE_CURRENT_BINARY_DIR}/te-config.cmake"
  INSTALL_DESTINATION ${TE_INSTALL_CMAKEDIR})
write_basic_package_version_file("${CMAKE_CURRENT_BINARY_DIR}/te-config-version.cmake"
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES "${CMAKE_CURRENT_BINARY_DIR}/te-config.cmake"
              "${CMAKE_CURRENT_BINARY_DIR}/te-config-version.cmake"
              cmake/TeKernelLibrary.cmake
        DESTINATION ${TE_INSTALL_CMAKEDIR})

# pkg-config: the prefix is found relative to the .pc file.
file(RELATIVE_PATH TE_PC_TO_PREFIX "${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig"
     "${CMAKE_INSTALL_PREFIX}")
string(REGEX REPLACE "/$" "" TE_PC_TO_PREFIX "${TE_PC_TO_PREFIX}")
set(TE_PC_CFLAGS "")
if(NOT TE_DLPACK_INCLUDE_DIR STREQUAL "/usr/include")
  set(TE_PC_CFLAGS " -I${TE_DLPACK_INCLUDE_DIR}")
endif()
set(TE_PC_OPENMP_LIBS "")
foreach(lib IN LISTS OpenMP_C_LIB_NAMES)
  string(APPEND TE_PC_OPENMP_LIBS " -l${lib}")
endforeach()
get_filename_component(TE_PC_LLVM_DIR "${TE_LLVM_LIBRARY}" DIRECTORY)
configure_file(cmake/te.pc.in "${CMAKE_CURRENT_BINARY_DIR}/te.pc" @ONLY)
configure_file(cmake/te_runtime.pc.in "${CMAKE_CURRENT_BINARY_DIR}/te_runtime.pc" @ONLY)
install(FILES "${CMAKE_CURRENT_BINARY_DIR}/te.pc" "${CMAKE_CURRENT_BINARY_DIR}/te_runtime.pc"
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
