# TeCompilerFlags.cmake — the flags every target of te is built with.
#
# Warnings as in CONVENTIONS.md (C only), TE_WERROR to make them errors, TE_SANITIZE for the
# ASan+UBSan build that runs the whole suite, TE_DEBUG=1 in Debug and RelWithDebInfo builds
# (the IR verifier runs after every lowering pass then).

set(TE_C_WARNINGS -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes)
add_compile_options("$<$<COMPILE_LANGUAGE:C>:${TE_C_WARNINGS}>")
if(TE_WERROR)
  add_compile_options("$<$<COMPILE_LANGUAGE:C>:-Werror>")
endif()

add_compile_definitions("$<$<CONFIG:Debug,RelWithDebInfo>:TE_DEBUG=1>")

if(TE_SANITIZE)
  set(TE_SANITIZE_FLAGS -fsanitize=address,undefined -fno-omit-frame-pointer
                        -fno-sanitize-recover=undefined)
  add_compile_options(${TE_SANITIZE_FLAGS})
  add_link_options(${TE_SANITIZE_FLAGS})
endif()
