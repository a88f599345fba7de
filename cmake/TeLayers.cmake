# TeLayers.cmake — te's layers (lib/layers.txt), each an object library that sees only the
# headers of the layers below it.
#
#   te_layer(<layer>)   the OBJECT library te_<layer>_obj: every .c file of the layer's folder,
#                       compiled with the public headers (te_headers), its own folder, and the
#                       layers it may use, each through ${PROJECT_BINARY_DIR}/layers/<layer>/,
#                       a folder holding one symbolic link <layer> -> the layer's folder.
#                       So "lower/lower.h" compiles in lib/codegen, and "codegen/codegen.h" in
#                       lib/lower fails: no include path of lower has a codegen/ in it.
#   te_layer_objects(<var> <layer>...)   $<TARGET_OBJECTS:...> of those layers, for a library
#   te_layer_checks()   the CTest tests layers.includes and layers.symbols (scripts/check-layers.sh)
#
# An include that climbs out of its folder ("../codegen/codegen.h") would bypass the include
# paths: layers.includes refuses it, and every include the table does not allow. layers.symbols
# checks the built objects: a layer may use only the symbols of the layers it may include (a
# call through a public te_* function of a higher layer has no include to catch).
# The unit tests see all of lib/ (te_static's include path): they test the internals of any layer.

set(TE_LAYERS_FILE "${PROJECT_SOURCE_DIR}/lib/layers.txt")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${TE_LAYERS_FILE}")
file(STRINGS "${TE_LAYERS_FILE}" _te_layer_lines REGEX "^[a-z]")
set(TE_LAYERS "")
foreach(_line IN LISTS _te_layer_lines)
  string(REGEX REPLACE "[ \t]+" ";" _fields "${_line}")
  list(POP_FRONT _fields _name _folder)
  list(APPEND TE_LAYERS "${_name}")
  set(TE_LAYER_${_name}_FOLDER "${PROJECT_SOURCE_DIR}/${_folder}")
  set(TE_LAYER_${_name}_USES "${_fields}")
  # The layer's include root: one entry, the layer's name, pointing at its folder.
  set(_root "${PROJECT_BINARY_DIR}/layers/${_name}")
  file(MAKE_DIRECTORY "${_root}")
  file(CREATE_LINK "${PROJECT_SOURCE_DIR}/${_folder}" "${_root}/${_name}" SYMBOLIC) # replaces an old one
endforeach()

# The include roots a target of layer <layer> gets: its own and those of the layers it may use.
function(te_layer_include_dirs target layer)
  if(NOT layer IN_LIST TE_LAYERS)
    message(FATAL_ERROR "te_layer: '${layer}' is not a layer of lib/layers.txt")
  endif()
  set(dirs "${PROJECT_BINARY_DIR}/layers/${layer}")
  foreach(used IN LISTS TE_LAYER_${layer}_USES)
    list(APPEND dirs "${PROJECT_BINARY_DIR}/layers/${used}")
  endforeach()
  target_include_directories(${target} PRIVATE ${dirs})
endfunction()

function(te_layer layer)
  file(GLOB sources CONFIGURE_DEPENDS "${TE_LAYER_${layer}_FOLDER}/*.c")
  if(NOT sources)
    set(sources "${TE_EMPTY_SOURCE}")
  endif()
  add_library(te_${layer}_obj OBJECT ${sources})
  te_layer_include_dirs(te_${layer}_obj ${layer})
  target_link_libraries(te_${layer}_obj PUBLIC te_headers)
  set_target_properties(te_${layer}_obj PROPERTIES C_VISIBILITY_PRESET hidden)
endfunction()

function(te_layer_objects var)
  set(objects "")
  foreach(layer IN LISTS ARGN)
    list(APPEND objects "$<TARGET_OBJECTS:te_${layer}_obj>")
  endforeach()
  set(${var} "${objects}" PARENT_SCOPE)
endfunction()

# layers.includes reads the sources; layers.symbols the objects of every layer built as an object
# library, listed (one "layer object..." line each) in layers/objects.txt at generate time.
function(te_layer_checks)
  set(lines "")
  foreach(layer IN LISTS TE_LAYERS)
    if(TARGET te_${layer}_obj)
      string(APPEND lines "${layer} $<JOIN:$<TARGET_OBJECTS:te_${layer}_obj>, >\n")
    endif()
  endforeach()
  file(GENERATE OUTPUT "${PROJECT_BINARY_DIR}/layers/objects.txt" CONTENT "${lines}")
  set(script "${PROJECT_SOURCE_DIR}/scripts/check-layers.sh")
  add_test(NAME layers.includes COMMAND "${script}")
  add_test(NAME layers.symbols COMMAND "${script}" --objects "${PROJECT_BINARY_DIR}/layers/objects.txt")
  # The check itself must catch a backward include: test/layers/ is a small tree with one.
  add_test(NAME layers.detects_backward_include
           COMMAND "${script}" --root "${PROJECT_SOURCE_DIR}/test/layers/backward")
  set_tests_properties(layers.detects_backward_include PROPERTIES
    PASS_REGULAR_EXPRESSION "lib/ir/bad.c:3: \"schedule/sch.h\": layer ir may not use layer schedule")
  set_tests_properties(layers.includes layers.symbols layers.detects_backward_include
                       PROPERTIES LABELS layers TIMEOUT 120)
endfunction()
