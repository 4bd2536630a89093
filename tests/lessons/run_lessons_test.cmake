# run_lessons_test.cmake — the lessons workflow ends on the course's own summary line.
#
#   cmake -DRUNNER=scripts/run_lessons.cmake -DWORK=<scratch folder> [-DBUILD_DIR=<build folder>] -P run_lessons_test.cmake
#
# First scripts/run_lessons.cmake on made-up lessons (shell scripts that exit with a given code):
# what it writes to its result file ("ok" passes the build step, "failed" fails it) and its last
# line, for each mix of exit codes. Then, with BUILD_DIR, the real run_lessons target (the build
# step of `cmake --workflow --preset lessons`) with no GPU visible (CUDA_VISIBLE_DEVICES set
# empty, so a machine with GPUs runs only the host parts too): it must succeed, and its last line
# must be the summary, not the build tool's report of a failed command.
cmake_minimum_required(VERSION 3.25)
foreach(var RUNNER WORK)
  if(NOT ${var})
    message(FATAL_ERROR "run_lessons_test: -D${var}=... is required")
  endif()
endforeach()
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
set(problems "")

function(last_line text out)  # the last line that is not empty
  string(REGEX REPLACE "[\r\n]+$" "" text "${text}")
  string(REGEX MATCH "[^\n]*$" line "${text}")
  set(${out} "${line}" PARENT_SCOPE)
endfunction()

# case: exit codes of the made-up lessons; the result and last line the runner must give.
function(runner_case name codes require_gpu expected_result expected_line)
  set(list "")
  set(i 0)
  foreach(code IN LISTS codes)
    math(EXPR i "${i} + 1")
    set(exe "${WORK}/${name}/lesson_${i}")
    file(WRITE "${exe}" "#!/bin/sh\necho \"lesson ${i}: host part\"\nexit ${code}\n")
    file(CHMOD "${exe}" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)
    string(APPEND list "${exe}\n")
  endforeach()
  file(WRITE "${WORK}/${name}/lessons.txt" "${list}")
  execute_process(COMMAND ${CMAKE_COMMAND} -E env COURSE_REQUIRE_GPU=${require_gpu}
                          ${CMAKE_COMMAND} -DLESSONS_FILE=${WORK}/${name}/lessons.txt -DRESULT_FILE=${WORK}/${name}/result
                          -P ${RUNNER}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)  # one variable: merged in order
  set(result "(none)")
  if(EXISTS "${WORK}/${name}/result")
    file(STRINGS "${WORK}/${name}/result" result)
  endif()
  last_line("${out}" line)
  if(NOT rc EQUAL 0 OR NOT result STREQUAL expected_result OR NOT line STREQUAL expected_line)
    set(problems "${problems}\n  ${name}: exit ${rc}, result '${result}' (expected '${expected_result}'), last line '${line}' (expected '${expected_line}')" PARENT_SCOPE)
  else()
    message("ok: ${name}: ${result}: ${line}")
  endif()
endfunction()

runner_case(all_ran "0;0" 0 ok "All 2 lessons ran; every output matched its CPU reference.")
runner_case(no_gpu "3;3;3" 0 ok "3 lessons ran their host part; GPU parts need an NVIDIA GPU")
runner_case(some_gpu "0;3" 0 ok "1 lesson ran the host part only; GPU parts need an NVIDIA GPU")
runner_case(no_gpu_required "3;3" 1 failed
            "2 lessons ran their host part; GPU parts need an NVIDIA GPU (COURSE_REQUIRE_GPU is set: that is a failure)")
runner_case(one_failed "3;1;3" 0 failed
            "1 of 3 lessons failed: lesson_2 (exit 1). 2 lessons ran the host part only; GPU parts need an NVIDIA GPU")
runner_case(does_not_fit "0;4" 0 failed "1 of 2 lessons failed: lesson_2 (exit 4).")

if(BUILD_DIR)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env CUDA_VISIBLE_DEVICES= COURSE_REQUIRE_GPU=0
                          ${CMAKE_COMMAND} --build ${BUILD_DIR} --target run_lessons
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)  # one variable: merged in order
  file(WRITE "${WORK}/run_lessons.log" "${out}")
  last_line("${out}" line)
  string(REGEX MATCHALL "\n=== [^\n]+ ===" ran "${out}")
  list(LENGTH ran n)
  if(NOT rc EQUAL 0 OR NOT line MATCHES "^${n} lessons ran their host part; GPU parts need an NVIDIA GPU$" OR n EQUAL 0)
    string(APPEND problems "\n  run_lessons target with no GPU visible: exit ${rc}, ${n} lessons, last line '${line}' (output: ${WORK}/run_lessons.log)")
  else()
    message("ok: the run_lessons target with no GPU visible: exit 0, last line: ${line}")
  endif()
endif()

if(problems)
  message(FATAL_ERROR "run_lessons test failed:${problems}")
endif()
