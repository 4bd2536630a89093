# run_lessons.cmake — run every lesson in order, whatever each one's exit code, then print one
# summary line. The run_lessons target (`cmake --workflow --preset lessons`) calls it as
#
#   cmake -DLESSONS_FILE=run_lessons.txt -DRESULT_FILE=run_lessons.result -P run_lessons.cmake
#
# LESSONS_FILE lists the lesson executables, one per line. Without a GPU each lesson prints its
# host-side part (its model, its CPU arithmetic), says that the rest needs a GPU and exits with 3;
# the runner goes on to the next one, so a newcomer sees all six.
#
# The runner itself always exits 0 and writes "ok" or "failed" to RESULT_FILE; the target's next
# command compares that file with one that says "ok", which fails the build step (and so the
# workflow) without a second error message: CMake before 3.29 cannot end a script with an exit
# code of its own choosing other than through message(FATAL_ERROR), which adds a "CMake Error".
#
# "ok": every lesson ran in full, or the only thing missing was a GPU (every lesson that did not
# run in full exited with 3 after its host part). That is the expected outcome on a machine
# without one, so the workflow ends on the summary line, not on the build tool's report of a
# failed command. COURSE_REQUIRE_GPU=1 in the environment (as for the checks) makes a missing GPU
# a failure too, for runs that must use one. "failed": a lesson's output was wrong, a CUDA call
# failed, a size did not fit, or it crashed; the build step then fails after the summary line.
cmake_minimum_required(VERSION 3.25)

if(NOT LESSONS_FILE OR NOT RESULT_FILE)
  message(FATAL_ERROR "usage: cmake -DLESSONS_FILE=<list> -DRESULT_FILE=<file> -P run_lessons.cmake")
endif()
file(REMOVE "${RESULT_FILE}")
file(STRINGS "${LESSONS_FILE}" lessons)
list(LENGTH lessons total)

set(ran 0)        # exit 0: every output matched the CPU reference
set(host_only 0)  # exit 3: no usable GPU, only the host part ran
set(failed "")    # anything else: wrong output, CUDA error, does not fit
foreach(exe IN LISTS lessons)
  get_filename_component(name "${exe}" NAME_WE)
  message("\n=== ${name} ===")
  if(CMAKE_HOST_UNIX)  # stderr into the same pipe as stdout, so the no-GPU line stays in its place
    execute_process(COMMAND sh -c "exec \"$0\" 2>&1" "${exe}" RESULT_VARIABLE rc)
  else()
    execute_process(COMMAND "${exe}" RESULT_VARIABLE rc)
  endif()
  if(rc STREQUAL "0")
    math(EXPR ran "${ran} + 1")
  elseif(rc STREQUAL "3")
    math(EXPR host_only "${host_only} + 1")
  else()
    list(APPEND failed "${name} (exit ${rc})")
  endif()
endforeach()

if(ran EQUAL total)
  message("\nAll ${total} lessons ran; every output matched its CPU reference.")
  file(WRITE "${RESULT_FILE}" "ok\n")
  return()
endif()
function(count_lessons n out)  # "1 lesson", "6 lessons"
  if(n EQUAL 1)
    set(${out} "1 lesson" PARENT_SCOPE)
  else()
    set(${out} "${n} lessons" PARENT_SCOPE)
  endif()
endfunction()
set(require_gpu OFF)
if(DEFINED ENV{COURSE_REQUIRE_GPU} AND NOT "$ENV{COURSE_REQUIRE_GPU}" STREQUAL "" AND NOT "$ENV{COURSE_REQUIRE_GPU}" STREQUAL "0")
  set(require_gpu ON)
endif()
set(summary "")
if(failed)
  list(LENGTH failed n_failed)
  list(JOIN failed ", " failed_text)
  string(APPEND summary "${n_failed} of ${total} lessons failed: ${failed_text}. ")
endif()
count_lessons(${host_only} host_text)
if(host_only EQUAL total)
  string(APPEND summary "${host_text} ran their host part; GPU parts need an NVIDIA GPU")
elseif(host_only GREATER 0)
  string(APPEND summary "${host_text} ran the host part only; GPU parts need an NVIDIA GPU")
endif()
if(host_only GREATER 0 AND require_gpu)
  string(APPEND summary " (COURSE_REQUIRE_GPU is set: that is a failure)")
endif()
string(STRIP "${summary}" summary)
message("\n${summary}")
if(failed OR require_gpu)
  file(WRITE "${RESULT_FILE}" "failed\n")
else()
  file(WRITE "${RESULT_FILE}" "ok\n")
endif()
