# Compiler cache: every compile goes through ccache when it is installed, unless the caller chose
# a launcher (-DCMAKE_CXX_COMPILER_LAUNCHER=...) or turned it off (-DCONVERGE_CCACHE=OFF).
#
# ccache refuses to cache a compile that uses a precompiled header (cmake/ConvergePch.cmake)
# unless its sloppiness includes pch_defines and time_macros (ccache(1), "Precompiled headers"):
# every such compile counted as "uncacheable". include_file_mtime and include_file_ctime keep a
# freshly built .gch from looking too new to cache. They are passed through the environment, on
# top of the sloppiness the user's own ccache configuration already has. ccache still hashes the
# .gch itself (the -include'd header's precompiled file), so a rebuilt one is a miss.
#
# depend_mode: on a miss ccache hashes the dependency file the compiler writes anyway (-MD) instead
# of running the preprocessor once more. On cold compiles (CI: every compile is a miss) it
# measured the same as the default within noise (docs/PERFORMANCE.md, "Build and CI time").
#
# Without precompiled headers (CONVERGE_PCH off, set by cmake/ConvergePch.cmake, included first)
# the launcher is plain ccache.
option(CONVERGE_CCACHE "Compile through ccache when it is installed" ON)
find_program(CCACHE_PROGRAM ccache)
find_program(CONVERGE_ENV_PROGRAM env)
if(NOT CONVERGE_CCACHE OR NOT CCACHE_PROGRAM OR CMAKE_CXX_COMPILER_LAUNCHER)
  # No cache, or the caller's own launcher.
elseif(NOT CONVERGE_PCH OR NOT CONVERGE_ENV_PROGRAM)
  set(CMAKE_CXX_COMPILER_LAUNCHER ${CCACHE_PROGRAM})
  set(CMAKE_C_COMPILER_LAUNCHER ${CCACHE_PROGRAM})
else()
  execute_process(COMMAND ${CCACHE_PROGRAM} --get-config sloppiness
    OUTPUT_VARIABLE converge_ccache_sloppiness OUTPUT_STRIP_TRAILING_WHITESPACE
    ERROR_QUIET)
  string(REPLACE " " "" converge_ccache_sloppiness "${converge_ccache_sloppiness}")
  if(converge_ccache_sloppiness)
    string(APPEND converge_ccache_sloppiness ",")
  endif()
  string(APPEND converge_ccache_sloppiness
    "pch_defines,time_macros,include_file_mtime,include_file_ctime")
  set(converge_ccache_launcher ${CONVERGE_ENV_PROGRAM}
    "CCACHE_SLOPPINESS=${converge_ccache_sloppiness}" CCACHE_DEPEND=true ${CCACHE_PROGRAM})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${converge_ccache_launcher})
  set(CMAKE_C_COMPILER_LAUNCHER ${converge_ccache_launcher})
endif()
