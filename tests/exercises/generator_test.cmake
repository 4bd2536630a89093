# generator_test.cmake — one test of scripts/make_exercises.cmake on one small file.
#
#   cmake -DINPUT=marked.cu -DEXPECTED=marked.expected.cu -DWORK=dir -P generator_test.cmake
#       the generator must succeed and write exactly EXPECTED
#   cmake -DINPUT=bad.cu -DEXPECT_ERROR="bad.cu:3: message" -DWORK=dir -P generator_test.cmake
#       the generator must fail, print "<INPUT>:3: message" as its first line, and write nothing
cmake_minimum_required(VERSION 3.25)
get_filename_component(root "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)
get_filename_component(name "${INPUT}" NAME)
set(output "${WORK}/${name}.out")
file(REMOVE "${output}")
file(MAKE_DIRECTORY "${WORK}")
execute_process(COMMAND ${CMAKE_COMMAND} -DINPUT=${INPUT} -DOUTPUT=${output} -P ${root}/scripts/make_exercises.cmake
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)

if(DEFINED EXPECTED)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the generator failed on ${INPUT} (exit ${rc}):\n${out}${err}")
  endif()
  file(READ "${output}" got)
  file(READ "${EXPECTED}" want)
  if(NOT got STREQUAL want)
    message(FATAL_ERROR "${output} differs from ${EXPECTED}: compare them with diff")
  endif()
  message(STATUS "ok: ${name} came out as ${EXPECTED}")
else()
  if(rc EQUAL 0)
    message(FATAL_ERROR "the generator accepted ${INPUT}; it must refuse it with: ${EXPECT_ERROR}")
  endif()
  if(EXISTS "${output}")
    message(FATAL_ERROR "the generator refused ${INPUT} but wrote ${output} anyway")
  endif()
  string(REGEX MATCH "^[^\n]*" first_line "${err}")
  if(NOT first_line STREQUAL "${INPUT}:${EXPECT_ERROR}")
    message(FATAL_ERROR "expected the first line\n  ${INPUT}:${EXPECT_ERROR}\ngot\n  ${first_line}\n(all output: ${out}${err})")
  endif()
  message(STATUS "ok: refused with: ${first_line}")
endif()
