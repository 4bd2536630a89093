# check_summary.cmake — the check workflow's closing line: how many host checks passed, how many
# GPU checks ran, and, if they were skipped, why. CTest's own headline ("100% tests passed, 0 tests
# failed out of 37") counts a skipped check among the passed ones; this line does not.
#
# CTest runs it after the tests (CTEST_CUSTOM_POST_TEST in the build folder's CTestCustom.cmake,
# written by CMakeLists.txt), so it is the last thing the workflow prints; it never changes CTest's
# exit code. It reads the JUnit file that the default test preset writes (outputJUnitFile) and is
# deleted before every run (CTEST_CUSTOM_PRE_TEST), so a run without that file (a `ctest` by hand,
# or `ctest -N`) prints nothing rather than an old run's result.
#
#   cmake -DJUNIT=<file.xml> -DGPU_TESTS=<file: one GPU test name a line> [-DCHECKS_OFF=<why>] -P check_summary.cmake
cmake_minimum_required(VERSION 3.25)

function(say text)  # on stdout, like CTest's own lines, so it stays last through a pipe too
  execute_process(COMMAND ${CMAKE_COMMAND} -E echo "${text}")
endfunction()

if(NOT JUNIT OR NOT EXISTS "${JUNIT}")
  return()
endif()
if(CHECKS_OFF)
  say("\nCourse checks: none were built or run (${CHECKS_OFF}); see the test output above.")
  return()
endif()
set(gpu_tests "")
if(GPU_TESTS AND EXISTS "${GPU_TESTS}")
  file(STRINGS "${GPU_TESTS}" gpu_tests)
endif()

file(READ "${JUNIT}" xml)
foreach(group host gpu)
  foreach(state passed failed skipped)
    set(${group}_${state} 0)
  endforeach()
  set(${group}_reason "")
endforeach()
# One <testcase name="..." ... status="run|fail|notrun|disabled"> ... </testcase> at a time.
while(TRUE)
  string(FIND "${xml}" "<testcase " at)
  if(at EQUAL -1)
    break()
  endif()
  string(SUBSTRING "${xml}" ${at} -1 xml)
  string(FIND "${xml}" "</testcase>" end)  # -1 (not found): to the end
  string(SUBSTRING "${xml}" 0 ${end} case)
  string(SUBSTRING "${xml}" 10 -1 xml)  # past "<testcase ", to find the next one
  string(REGEX MATCH "name=\"([^\"]*)\"" _ "${case}")
  set(name "${CMAKE_MATCH_1}")
  string(REGEX MATCH "status=\"([a-z]*)\"" _ "${case}")
  set(status "${CMAKE_MATCH_1}")
  set(group host)
  if(name IN_LIST gpu_tests)
    set(group gpu)
  endif()
  if(status STREQUAL "run" AND NOT case MATCHES "<failure")
    math(EXPR ${group}_passed "${${group}_passed} + 1")
  elseif(status STREQUAL "notrun" AND case MATCHES "<skipped message=\"SKIP_")  # SKIP_RETURN_CODE=77, or its regex
    math(EXPR ${group}_skipped "${${group}_skipped} + 1")
    # The course's checks say why on a line "SKIPPED: <why>" (harness/check_main.hpp).
    if(NOT ${group}_reason AND case MATCHES "SKIPPED: ([^\n<]*)")
      string(REGEX REPLACE "^[A-Za-z]+ test cases not run: " "" reason "${CMAKE_MATCH_1}")
      foreach(pair "&lt;:<" "&gt;:>" "&quot;:\"" "&apos;:'" "&amp;:&")
        string(REGEX REPLACE "^([^:]+):(.*)$" "\\1" entity "${pair}")
        string(REGEX REPLACE "^([^:]+):(.*)$" "\\2" char "${pair}")
        string(REPLACE "${entity}" "${char}" reason "${reason}")
      endforeach()
      set(${group}_reason "${reason}")
    endif()
  else()  # failed, timed out, or not run for another reason (no executable): CTest counts it failed
    math(EXPR ${group}_failed "${${group}_failed} + 1")
  endif()
endwhile()

function(describe group what out)  # "31 host checks passed", "6 GPU checks SKIPPED (not run: why)"
  set(parts "")
  foreach(state passed FAILED SKIPPED)
    string(TOLOWER ${state} key)
    if(${group}_${key} GREATER 0)
      set(text "${${group}_${key}} ${state}")
      if(NOT parts)  # the first number names what it counts
        set(text "${${group}_${key}} ${what} ${state}")
      endif()
      if(key STREQUAL "skipped" AND ${group}_reason)
        string(APPEND text " (not run: ${${group}_reason})")
      endif()
      list(APPEND parts "${text}")
    endif()
  endforeach()
  list(JOIN parts ", " text)
  set(${out} "${text}" PARENT_SCOPE)
endfunction()
describe(host "host checks" host_text)
describe(gpu "GPU checks" gpu_text)
set(line "${host_text}")
if(host_text AND gpu_text)
  string(APPEND line "; ")
endif()
string(APPEND line "${gpu_text}")
if(NOT line)
  return()  # no test ran
endif()
set(line "Course checks: ${line}")
if(gpu_skipped GREATER 0)
  string(APPEND line ". CTest's \"tests passed\" above counts a skipped check as passed: the kernels were not checked here")
elseif(host_skipped GREATER 0)
  string(APPEND line ". CTest's \"tests passed\" above counts a skipped check as passed")
endif()
say("\n${line}.")
