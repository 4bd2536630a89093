# checks_off_test.cmake — the check workflow with -DCOURSE_BUILD_CHECKS=OFF says why nothing was
# checked, from configure to its last line, instead of CTest's bare "No tests were found!!!".
#
#   cmake -DSOURCE=<course folder> -DWORK=<scratch folder> [-DARCH=<CMAKE_CUDA_ARCHITECTURES>] [-DCTEST=ctest]
#         -P checks_off_test.cmake
#
# Copies the course's sources to WORK (the presets build in <source>/build), configures them with the
# README's command `cmake --preset default -DCOURSE_BUILD_CHECKS=OFF`, then runs the check workflow's
# test step, `ctest --preset default` (the build step is left out: with the checks off it builds only
# the lessons, and nothing here depends on them). Asserts: configure says the checks are off; ctest
# fails (nothing was checked), its output says why, and its last line is the course's own.
cmake_minimum_required(VERSION 3.25)
if(NOT CTEST)
  set(CTEST ctest)
endif()
foreach(var SOURCE WORK)
  if(NOT ${var})
    message(FATAL_ERROR "checks_off_test: -D${var}=... is required")
  endif()
endforeach()
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}/src")
foreach(item CMakeLists.txt CMakePresets.json cmake common lessons exercises scripts grading)  # grading: lessons.py, the configure reads lessons.txt with it
  file(COPY "${SOURCE}/${item}" DESTINATION "${WORK}/src")
endforeach()
set(problems "")

set(args -DCOURSE_BUILD_CHECKS=OFF)
if(ARCH)
  list(APPEND args "-DCMAKE_CUDA_ARCHITECTURES=${ARCH}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --preset default ${args} WORKING_DIRECTORY "${WORK}/src"
                RESULT_VARIABLE rc OUTPUT_VARIABLE configure ERROR_VARIABLE configure)
file(WRITE "${WORK}/configure.log" "${configure}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configure failed (exit ${rc}); see ${WORK}/configure.log")
endif()
if(NOT configure MATCHES "The checks are not built: this build folder was configured with -DCOURSE_BUILD_CHECKS=OFF")
  string(APPEND problems "\n  configure did not say that the checks are off (${WORK}/configure.log)")
endif()

execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=COURSE_REQUIRE_GPU ${CTEST} --preset default
                WORKING_DIRECTORY "${WORK}/src" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
file(WRITE "${WORK}/ctest.log" "${out}")
string(REGEX REPLACE "[\r\n]+$" "" trimmed "${out}")
string(REGEX MATCH "[^\n]*$" last "${trimmed}")
if(rc EQUAL 0)
  string(APPEND problems "\n  ctest --preset default passed, though nothing was checked")
endif()
if(out MATCHES "No tests were found")
  string(APPEND problems "\n  ctest said 'No tests were found'")
endif()
if(NOT out MATCHES "checks_not_built[^\n]*Failed" OR NOT out MATCHES "\nThe checks are not built: [^\n]*cmake --preset default -DCOURSE_BUILD_CHECKS=ON")
  string(APPEND problems "\n  ctest's output does not explain (the checks_not_built test and its message)")
endif()
# CTest's own "Errors while running CTest" and "Output from these tests are in ..." follow on stderr;
# the course's line is the last one on stdout.
if(NOT out MATCHES "\nCourse checks: none were built or run \\(configured with -DCOURSE_BUILD_CHECKS=OFF\\)")
  string(APPEND problems "\n  no closing line 'Course checks: none were built or run (...)'")
endif()
if(problems)
  message(FATAL_ERROR "checks-off workflow:${problems}\n(logs: ${WORK}/configure.log, ${WORK}/ctest.log)")
endif()
message("ok: configure says the checks are off; ctest exits ${rc} and says why; last line: ${last}")
