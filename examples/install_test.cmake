# Installs the converge-client component of BUILD_DIR into WORK_DIR/prefix, builds the example
# in EXAMPLE_DIR against it as an independent project, and runs it with --help.
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
endfunction()

run(${CMAKE_COMMAND} --install ${BUILD_DIR} --component converge-client --prefix ${prefix})
if(NOT EXISTS ${prefix}/lib/cmake/ConvergeClient/ConvergeClientConfig.cmake AND
   NOT EXISTS ${prefix}/lib/x86_64-linux-gnu/cmake/ConvergeClient/ConvergeClientConfig.cmake)
  message(FATAL_ERROR "ConvergeClientConfig.cmake was not installed under ${prefix}")
endif()
# The source tree must not be needed: the example sees only the prefix.
run(${CMAKE_COMMAND} -S ${EXAMPLE_DIR} -B ${WORK_DIR}/build -G ${GENERATOR}
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
    -DCMAKE_PREFIX_PATH=${prefix})
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run(${WORK_DIR}/build/configmap-mirror --help)
message(STATUS "installed package builds and runs configmap-mirror")
