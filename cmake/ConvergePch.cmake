# Precompiled headers for the third-party and standard headers that nearly every translation unit
# includes (Boost.JSON, spdlog/fmt, the standard containers; GoogleTest/GMock for tests).
#
# Two precompiled headers are built per build directory, each once, by the object libraries
# converge_pch and converge_test_pch; every other C++ target reuses one of them
# (target_precompile_headers(REUSE_FROM)):
# - targets that link GoogleTest (directly or through converge_testing) use converge_test_pch;
# - every other target that links converge_util uses converge_pch.
# Targets outside that rule (generated protobuf code, targets that do not link converge_util) and
# targets with the property CONVERGE_NO_PCH compile without one.
#
# GCC accepts a precompiled header only where the macros it was built with are defined the same way
# (-Winvalid-pch, an error under -Werror), so each provider links what its users link:
# converge_util's usage requirements (Boost.JSON, spdlog, fmt, Threads) and, for tests, GTest.
# Only third-party headers go in: they never change, so the .gch is built once per build
# directory and an edit to our own headers does not rebuild it.
#
# Measured in docs/PERFORMANCE.md ("Build and CI time"): 15-22 % less compile CPU time on a
# sample. On by default in the release, ASan and TSan builds of CI; the fuzz build (clang) never
# uses it. -DCONVERGE_PCH=OFF
# turns it off; the compile commands are then exactly those of a build without this module.
option(CONVERGE_PCH "Precompile the third-party headers most translation units include" ON)

set(CONVERGE_PCH_HEADERS
  <algorithm> <atomic> <chrono> <condition_variable> <cstdint> <deque> <functional> <map>
  <memory> <mutex> <optional> <set> <string> <string_view> <thread> <unordered_map> <utility>
  <variant> <vector>
  <boost/json.hpp> <spdlog/spdlog.h>)
set(CONVERGE_TEST_PCH_HEADERS ${CONVERGE_PCH_HEADERS} <gtest/gtest.h> <gmock/gmock.h>)

# Sources that compile without the precompiled header. In these files GCC 12 reports a bogus
# -Warray-bounds inside libstdc++'s std::string concatenation (char_traits.h: "forming offset
# [32, 33] is out of the bounds [0, 32]") when the standard headers come from a .gch, and stays
# silent on a plain compile of the same code (other projects hit the same GCC false positive with
# precompiled headers, e.g. canonical/mir issue 2987). If a new file fails that way (the include
# stack shows cmake_pch.hxx), add it here. In a unity build (CONVERGE_UNITY) these files also stay
# out of the batches, which include the precompiled header.
set(CONVERGE_PCH_SKIP
  examples/loadbalancer-operator/http_cloud.cc
  examples/loadbalancer-operator/http_cloud_test.cc
  src/api/strategic_merge_patch.cc
  src/apiserver/async_create_test.cc
  src/apiserver/rbac_authorizer_test.cc
  src/kubelet/pod_spec.cc)

# Every buildsystem target defined in `dir` and the directories below it.
function(_converge_targets_below dir out)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub ${subdirs})
    _converge_targets_below(${sub} sub_targets)
    list(APPEND targets ${sub_targets})
  endforeach()
  set(${out} ${targets} PARENT_SCOPE)
endfunction()

# The targets whose usage requirements `target` compiles with: its own link libraries and,
# transitively, their INTERFACE_LINK_LIBRARIES (link-only entries carry no compile flags).
function(_converge_usage_closure target out)
  set(seen "")
  get_target_property(queue ${target} LINK_LIBRARIES)
  if(NOT queue)
    set(queue "")
  endif()
  while(queue)
    list(POP_FRONT queue dep)
    if(dep MATCHES "^\\$<LINK_ONLY:" OR NOT TARGET ${dep})
      continue()
    endif()
    get_target_property(aliased ${dep} ALIASED_TARGET)
    if(aliased)
      set(dep ${aliased})
    endif()
    if(dep IN_LIST seen)
      continue()
    endif()
    list(APPEND seen ${dep})
    get_target_property(next ${dep} INTERFACE_LINK_LIBRARIES)
    if(next)
      list(APPEND queue ${next})
    endif()
  endwhile()
  set(${out} ${seen} PARENT_SCOPE)
endfunction()

# Call once, after every target is defined.
#
# The libFuzzer build (CONVERGE_FUZZ, clang) compiles without: its targets differ in their
# -fsanitize flags, which a shared precompiled header cannot span.
function(converge_precompile_headers)
  if(NOT CONVERGE_PCH OR CONVERGE_FUZZ)
    return()
  endif()
  _converge_targets_below(${PROJECT_SOURCE_DIR} targets)

  # The providers compile with converge_util's usage requirements without linking it:
  # converge_util reuses converge_pch itself, and a link would make the two depend on each other.
  get_target_property(util_deps converge_util INTERFACE_LINK_LIBRARIES)
  set(anchor ${PROJECT_SOURCE_DIR}/cmake/pch_anchor.cc)
  add_library(converge_pch OBJECT ${anchor})
  target_link_libraries(converge_pch PRIVATE ${util_deps})
  target_compile_options(converge_pch PRIVATE ${CONVERGE_WARNINGS})
  target_precompile_headers(converge_pch PRIVATE ${CONVERGE_PCH_HEADERS})
  set(have_test_pch FALSE)
  if(TARGET GTest::gtest)
    add_library(converge_test_pch OBJECT ${anchor})
    target_link_libraries(converge_test_pch PRIVATE ${util_deps} GTest::gtest GTest::gmock)
    target_compile_options(converge_test_pch PRIVATE ${CONVERGE_WARNINGS} ${CONVERGE_TEST_OPTIMIZATION})
    target_precompile_headers(converge_test_pch PRIVATE ${CONVERGE_TEST_PCH_HEADERS})
    set(have_test_pch TRUE)
  endif()

  foreach(source ${CONVERGE_PCH_SKIP})
    set_source_files_properties(${PROJECT_SOURCE_DIR}/${source} TARGET_DIRECTORY ${targets}
      PROPERTIES SKIP_PRECOMPILE_HEADERS ON SKIP_UNITY_BUILD_INCLUSION ON)
  endforeach()

  foreach(target ${targets})
    get_target_property(type ${target} TYPE)
    if(NOT type MATCHES "^(STATIC_LIBRARY|SHARED_LIBRARY|MODULE_LIBRARY|OBJECT_LIBRARY|EXECUTABLE)$")
      continue()
    endif()
    get_target_property(no_pch ${target} CONVERGE_NO_PCH)
    if(no_pch)
      continue()
    endif()
    _converge_usage_closure(${target} closure)
    if(NOT "converge_util" IN_LIST closure AND NOT target STREQUAL "converge_util")
      continue()
    endif()
    if(have_test_pch AND "GTest::gtest" IN_LIST closure)
      target_precompile_headers(${target} REUSE_FROM converge_test_pch)
      # The test header is built at the test optimisation level (CMakeLists.txt): a user at
      # another level is refused by GCC only sometimes (-Winvalid-pch checks macros, and -O1 and
      # -O2 both define __OPTIMIZE__); otherwise it crashed (an internal compiler error in a
      # benchmark that links converge_testing).
      target_compile_options(${target} PRIVATE ${CONVERGE_TEST_OPTIMIZATION})
    else()
      target_precompile_headers(${target} REUSE_FROM converge_pch)
    endif()
  endforeach()
endfunction()
