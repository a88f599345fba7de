# TePythonWheel.cmake — what the Python wheel holds (python/pyproject.toml, scikit-build-core
# configures the project with -DTE_PYTHON_WHEEL=ON and installs the component "python" only):
#   te/libte.so                 the compiler, found by python/te/_lib.py beside the package
#   te/libte_runtime.so.0       what libte and its kernels call, under the name libte links
# Wheels cannot hold symbolic links, so each library is one file under the name it is loaded
# by, and libte finds the runtime beside it through RPATH $ORIGIN (set for the build tree too:
# installing files does not rewrite RPATHs, and in build/ both libraries share one folder).
option(TE_PYTHON_WHEEL "Configure for the Python wheel (set by python/pyproject.toml)" OFF)
if(TE_PYTHON_WHEEL)
  set_target_properties(te PROPERTIES BUILD_RPATH "$ORIGIN")
  install(FILES "$<TARGET_FILE:te>" DESTINATION te RENAME libte.so COMPONENT python)
  install(FILES "$<TARGET_FILE:te_runtime>" DESTINATION te RENAME libte_runtime.so.0
          COMPONENT python)
endif()
