# student_pack_test.cmake — the student pack works on its own: packed, unpacked in an empty folder,
# then the pack README's command `cmake --workflow --preset check` configures, builds and tests it.
#
#   cmake -DWORK=dir -DARCH=75[,90...] [-DPREFIX_PATH=dir[:dir...]] -P tests/student_pack/student_pack_test.cmake
#
# Asserts: the archive holds every exercise and every lesson's check and README, and no
# lessons/NN_name/main.cu and nothing for grading; lesson 05's companion (going_further/, no
# exercise) is there whole but for its profiler script; every exercise and check builds; every
# host test passes, except exercise 06's, whose host checks judge the (unsolved) tile layouts and
# must fail; no exercise's GPU test passes (unsolved): all are skipped (no GPU) or all fail (a
# GPU), and the companion's is skipped or passes with them; the workflow ends with the course's
# closing line. Lesson 06's probe tool is built from the exercise, as the README the pack gives
# names it (exercise_06_bank_conflicts_probes), and its model gives 2 wavefronts for s[lane * 6]
# (the README's self-check 1). Then, in the built pack, every relative link of its READMEs
# resolves and every command they give works (tests/student_pack/pack_readmes_test.cmake).
cmake_minimum_required(VERSION 3.25)
get_filename_component(root "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)
set(name shared-memory-course-student)
set(archive "${WORK}/${name}.tar.gz")
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}/unpacked")

function(fail what)
  message(FATAL_ERROR "student pack: ${what}")
endfunction()

# ---- pack, and look inside
execute_process(COMMAND ${CMAKE_COMMAND} -DOUT=${archive} -P ${root}/scripts/make_student_pack.cmake RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  fail("make_student_pack.cmake failed")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E tar tzf ${archive} OUTPUT_VARIABLE listing RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  fail("cannot list ${archive}")
endif()
if(listing MATCHES "lessons/[^/\n]+/main\\.cu")
  fail("the archive holds a solution: ${CMAKE_MATCH_0}")
endif()
if(listing MATCHES "[^\n]*grade[^\n]*")
  fail("the archive holds something for grading: ${CMAKE_MATCH_0}")
endif()
file(GLOB exercises RELATIVE "${root}/exercises" "${root}/exercises/[0-9][0-9]_*")
list(LENGTH exercises count)
if(count EQUAL 0)
  fail("no exercises/NN_name folders in ${root}")
endif()
foreach(exercise IN LISTS exercises)
  # .original_main.cu: what `scripts/exercises.sh reset` restores where there are no lessons
  foreach(file exercises/${exercise}/main.cu exercises/${exercise}/README.md lessons/${exercise}/check.cu
               lessons/${exercise}/README.md exercises/${exercise}/.original_main.cu)
    string(FIND "${listing}" "${name}/${file}\n" at)
    if(at EQUAL -1)
      fail("the archive lacks ${file}")
    endif()
  endforeach()
endforeach()
# The evidence `scripts/exercises.sh check` shows (and the lint it and the grader run): the tools, each lesson's rubric and the course
# solution's recorded speed figures.
file(GLOB rubrics RELATIVE "${root}" "${root}/lessons/[0-9][0-9]_*/rubric.json")
file(GLOB solution_figures RELATIVE "${root}" "${root}/results/*/evidence/solution.csv")
foreach(file grading/__init__.py grading/static_evidence.py grading/rubric.py grading/evidence.py grading/counters.py
             grading/counters_rules.py grading/ncu.py grading/ub_lint.py grading/ub_render.py grading/pipeline.py grading/cmdline.py grading/regions.py grading/lessons.py ${rubrics} ${solution_figures})
  string(FIND "${listing}" "${name}/${file}\n" at)
  if(at EQUAL -1)
    fail("the archive lacks ${file}")
  endif()
endforeach()
# The companions: lessons/NN_name/going_further/ with a main.cu, packed whole but for ncu*.sh.
file(GLOB companions RELATIVE "${root}/lessons" "${root}/lessons/[0-9][0-9]_*/going_further/main.cu")
list(TRANSFORM companions REPLACE "/going_further/main\\.cu$" "_going_further")
foreach(companion IN LISTS companions)
  string(REGEX REPLACE "_going_further$" "/going_further" dir "lessons/${companion}")
  foreach(file main.cu check.cu README.md)
    string(FIND "${listing}" "${name}/${dir}/${file}\n" at)
    if(at EQUAL -1)
      fail("the archive lacks ${dir}/${file}")
    endif()
  endforeach()
  if(listing MATCHES "${dir}/ncu[^/\n]*\\.sh")
    fail("the archive holds a profiler script: ${CMAKE_MATCH_0}")
  endif()
endforeach()
list(LENGTH companions companion_count)

# ---- unpack in an empty folder and run the README's command there
execute_process(COMMAND ${CMAKE_COMMAND} -E tar xzf ${archive} WORKING_DIRECTORY "${WORK}/unpacked" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  fail("cannot unpack ${archive}")
endif()
set(pack "${WORK}/unpacked/${name}")
# The parent build's GPU architectures and package path (given with ',' and ':' between entries),
# 2 build jobs, and GPU tests that may skip: through the environment the workflow inherits.
string(REPLACE "," ";" arch "${ARCH}")
set(ENV{CUDAARCHS} "${arch}")
if(PREFIX_PATH)
  set(ENV{CMAKE_PREFIX_PATH} "${PREFIX_PATH}")
endif()
set(ENV{CMAKE_BUILD_PARALLEL_LEVEL} 2)
set(ENV{COURSE_REQUIRE_GPU} 0)
message(STATUS "building the unpacked pack in ${pack} (CUDAARCHS=${arch}); this takes a few minutes")
execute_process(COMMAND ${CMAKE_COMMAND} --workflow --preset check
                WORKING_DIRECTORY "${pack}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
file(WRITE "${WORK}/workflow.log" "${out}${err}")
message(STATUS "its output: ${WORK}/workflow.log (exit code ${rc})")

# ---- what CTest reported, test by test: "  3/13 Test  #3: exercise_01_naive_transpose.gpu ...***Skipped"
string(REGEX MATCHALL "Test +#[0-9]+: [^ ]+ [^\n]*" lines "${out}")
set(seen "")
set(gpu_states "")
foreach(line IN LISTS lines)
  set(state "unrecognised")
  if(line MATCHES "^Test +#[0-9]+: ([^ ]+) [ .*]*(Passed|Failed|Skipped|Not Run|Exception|Timeout)")
    set(state "${CMAKE_MATCH_2}")
  endif()
  string(REGEX MATCH "^Test +#[0-9]+: ([^ ]+)" _ "${line}")
  set(test "${CMAKE_MATCH_1}")
  list(APPEND seen "${test}")
  if(test MATCHES "\\.host$")
    if(test STREQUAL "exercise_06_bank_conflicts.host")
      if(NOT state STREQUAL "Failed")
        fail("${test} reported '${state}': its host checks test the unsolved tile layouts and must fail (see ${WORK}/workflow.log)")
      endif()
    elseif(NOT state STREQUAL "Passed")
      fail("host test ${test} reported '${state}', not Passed (see ${WORK}/workflow.log)")
    endif()
  elseif(test MATCHES "\\.gpu$" AND NOT test MATCHES "^exercise_")  # a companion: whole, not an exercise
    if(NOT state MATCHES "^(Skipped|Passed)$")
      fail("GPU test ${test} reported '${state}': a companion's GPU checks must be skipped (no GPU) or pass")
    endif()
  elseif(test MATCHES "\\.gpu$")
    if(NOT state MATCHES "^(Skipped|Failed)$")
      fail("GPU test ${test} reported '${state}': an unsolved exercise's GPU checks must be skipped (no GPU) or fail")
    endif()
    list(APPEND gpu_states "${state}")
  endif()
endforeach()
foreach(exercise IN LISTS exercises)
  foreach(kind host gpu)
    if(NOT "exercise_${exercise}.${kind}" IN_LIST seen)
      fail("CTest never ran exercise_${exercise}.${kind}: did the pack configure and build? (see ${WORK}/workflow.log)")
    endif()
  endforeach()
endforeach()
foreach(companion IN LISTS companions)
  foreach(kind host gpu)
    if(NOT "${companion}.${kind}" IN_LIST seen)
      fail("CTest never ran ${companion}.${kind}: did the pack configure and build? (see ${WORK}/workflow.log)")
    endif()
  endforeach()
endforeach()
list(REMOVE_DUPLICATES gpu_states)
list(LENGTH gpu_states kinds)
if(NOT kinds EQUAL 1)
  fail("some GPU tests were skipped and others not: ${gpu_states}")
endif()
if(rc EQUAL 0)
  fail("`cmake --workflow --preset check` passed on unsolved exercises")
endif()
list(LENGTH exercises exercise_count)
math(EXPR gpu_count "${exercise_count} + ${companion_count}")
if(gpu_states STREQUAL "Skipped")  # no GPU: every GPU check skipped, the companions' too
  set(gpu_line "${gpu_count} GPU checks SKIPPED")
elseif(companion_count EQUAL 0)
  set(gpu_line "${exercise_count} GPU checks FAILED")
else()  # a GPU: the companions' checks pass, the unsolved exercises' fail
  set(gpu_line "${companion_count} GPU checks passed, ${exercise_count} FAILED")
endif()
if(NOT out MATCHES "\nCourse checks: [0-9]+ host checks passed, 1 FAILED; ${gpu_line}")
  fail("the workflow's output lacks its closing line 'Course checks: ...' (see ${WORK}/workflow.log)")
endif()

# ---- lesson 06's probe tool, built from the exercise by the pack's plain build (`all`), with no GPU:
# --list runs nothing. "NAME WIDTH WAVEFRONTS CONFLICTS": s[lane * 6] uses 16 banks, two words each.
if(NOT listing MATCHES "${name}/lessons/06_bank_conflicts/probes\\.cu\n")
  fail("the archive lacks lessons/06_bank_conflicts/probes.cu (lesson 06's probe tool)")
endif()
set(probes "${pack}/build/exercise_06_bank_conflicts_probes")
if(NOT EXISTS "${probes}")
  fail("the pack's build made no build/exercise_06_bank_conflicts_probes, which lesson 06's README runs (see ${WORK}/workflow.log)")
endif()
execute_process(COMMAND "${probes}" --list --probe-stride 6 RESULT_VARIABLE rc OUTPUT_VARIABLE probes_out ERROR_VARIABLE probes_err)
if(NOT rc EQUAL 0 OR NOT probes_out STREQUAL "w4_stride6 4 2 1\n")
  fail("`exercise_06_bank_conflicts_probes --list --probe-stride 6` exited ${rc} and printed '${probes_out}${probes_err}', not 'w4_stride6 4 2 1'")
endif()

# ---- the READMEs, in the pack as built: links and commands
execute_process(COMMAND ${CMAKE_COMMAND} -DPACK=${pack} -P ${root}/tests/student_pack/pack_readmes_test.cmake RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  fail("its READMEs give links or commands that do not work in the pack (above)")
endif()
message(STATUS "ok: the pack has no solutions, builds on its own, its host checks pass (06's judge its unsolved layouts), "
               "lesson 06's probe tool is built from the exercise, and its GPU checks were ${gpu_states}")
