# make_student_pack.cmake — the course without its solutions, as one archive for students:
# the exercises, every lesson's README and notes.md (made for the pack, see below), the idea figures
# they show (figures/) and its check, common/, the CMake
# files and presets, the student's script (scripts/exercises.sh) and the raw H200 output the READMEs
# quote. No lessons/NN_name/main.cu, nothing of the grader (only the C++ harness the checks link,
# harness/, grading/lessons.py which reads lessons/lessons.txt for the configure, and the evidence readers
# grading/static_evidence.py and evidence.py with each lesson's rubric.json that
# scripts/exercises.sh shows), no profiler scripts (they run the lessons), no OpenCL companion (its kernels are the transposes' solutions). Lesson 05's CUDA
# companion, lessons/05_tiled_matmul/going_further/, goes in whole but for its profiler script: it
# has no exercise (reading past the lesson, no solution to hide), so its main.cu is packed and
# built as in the course. The CMake build of the pack builds and checks the exercises (and the
# companion).
#
#   cmake -DOUT=/path/shared-memory-course-student.tar.gz -P scripts/make_student_pack.cmake
# (the CMake target `student_pack` runs this into the build folder)
cmake_minimum_required(VERSION 3.25)
get_filename_component(root "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
if(NOT DEFINED OUT)
  message(FATAL_ERROR "make_student_pack: give -DOUT=<archive.tar.gz>")
endif()
get_filename_component(OUT "${OUT}" ABSOLUTE)
get_filename_component(out_dir "${OUT}" DIRECTORY)
set(name shared-memory-course-student)
set(stage_root "${out_dir}/${name}.stage")
set(stage "${stage_root}/${name}")
file(REMOVE_RECURSE "${stage_root}")
file(MAKE_DIRECTORY "${stage}/lessons" "${stage}/scripts" "${stage}/results/h200")

file(COPY "${root}/CMakeLists.txt" "${root}/CMakePresets.json" "${root}/cmake" "${root}/common" "${root}/harness"
     "${root}/exercises" DESTINATION "${stage}")
# Each exercise as given, for `scripts/exercises.sh reset NN` (the pack has no lessons to make it from).
file(GLOB given RELATIVE "${root}/exercises" "${root}/exercises/[0-9][0-9]_*/main.cu")
foreach(file IN LISTS given)
  get_filename_component(folder "${file}" DIRECTORY)
  file(COPY_FILE "${root}/exercises/${file}" "${stage}/exercises/${folder}/.original_main.cu")
endforeach()
file(COPY "${root}/scripts/exercises.sh" "${root}/scripts/run_lessons.cmake" DESTINATION "${stage}/scripts")
file(COPY "${root}/scripts/check_summary.cmake" DESTINATION "${stage}/scripts")  # the check workflow's closing line
# The evidence `scripts/exercises.sh check` prints, with each lesson's rubric.json below: the static
# facts (grading/static_evidence.py reads the student's own binary), the counters
# (grading/counters.py) and the speed beside the course solution's (grading/evidence.py judges the
# check's --evidence lines against the solution's figures recorded on the course's GPUs,
# results/<gpu>/evidence/solution.csv: times, no code). Not the grader. They are modules of the package
# grading/ (run as `python3 -m grading.evidence ...`): its __init__.py, which imports nothing, comes too.
file(COPY "${root}/grading/__init__.py" "${root}/grading/static_evidence.py" "${root}/grading/rubric.py" "${root}/grading/evidence.py"
     "${root}/grading/counters.py" "${root}/grading/counters_rules.py" "${root}/grading/ncu.py" DESTINATION "${stage}/grading")
# The lint (grading/ub_lint.py: the device code as host C++ through g++ -O3, for undefined behaviour
# nvcc would delete), which `scripts/exercises.sh check` runs and the grader runs in its sandbox,
# with grading/regions.py (the EXERCISE markers' reader, which the lint reads regions through).
file(COPY "${root}/grading/ub_lint.py" "${root}/grading/ub_render.py" "${root}/grading/regions.py" DESTINATION "${stage}/grading")
# The pass rule every grading tool shares (grading/pipeline.py, standard library only, importing
# nothing of grading/ but cmdline.py): `scripts/exercises.sh` prints its table and "solved" through it.
# grading/cmdline.py: argparse with each tool's own grammar, which every tool above reads its command line with.
file(COPY "${root}/grading/pipeline.py" "${root}/grading/cmdline.py" DESTINATION "${stage}/grading")
file(GLOB solution_figures RELATIVE "${root}" "${root}/results/*/evidence/solution.csv")
foreach(file IN LISTS solution_figures)
  get_filename_component(folder "${file}" DIRECTORY)
  file(COPY "${root}/${file}" DESTINATION "${stage}/${folder}")
endforeach()
file(COPY "${root}/lessons/lessons.txt" DESTINATION "${stage}/lessons")
# Its one reader, which the pack's configure runs (cmake/course_lessons.cmake).
file(COPY "${root}/grading/lessons.py" DESTINATION "${stage}/grading")
# The raw output the READMEs quote and link to (speeds, profiler counts, sanitizer reports), and
# the charts they show.
foreach(file lessons.txt ncu.txt sanitizers.txt racecheck_racy.txt results.csv plots)
  file(COPY "${root}/results/h200/${file}" DESTINATION "${stage}/results/h200")
endforeach()
if(EXISTS "${root}/results/h100/lessons.txt")  # the H100's run, where a README compares the two
  file(COPY "${root}/results/h100/lessons.txt" DESTINATION "${stage}/results/h100")
endif()
file(COPY_FILE "${root}/scripts/student_pack/README.md" "${stage}/README.md")
file(GLOB lessons RELATIVE "${root}/lessons" "${root}/lessons/[0-9][0-9]_*")
set(companions "")
foreach(lesson IN LISTS lessons)
  file(COPY "${root}/lessons/${lesson}/check.cu" "${root}/lessons/${lesson}/README.md"  # README.md: rewritten below
       DESTINATION "${stage}/lessons/${lesson}")
  if(EXISTS "${root}/lessons/${lesson}/rubric.json")
    file(COPY "${root}/lessons/${lesson}/rubric.json" DESTINATION "${stage}/lessons/${lesson}")
  endif()
  # Lesson 06's probe tool: no solution in it (it #includes the main.cu CMake names: in the pack,
  # the exercise's), built as exercise_06_bank_conflicts_probes.
  if(EXISTS "${root}/lessons/${lesson}/probes.cu")
    file(COPY "${root}/lessons/${lesson}/probes.cu" DESTINATION "${stage}/lessons/${lesson}")
  endif()
  # The README's idea figures, and its notes page (notes.md: rewritten below like the README, and
  # copied first so that the README's link to it is kept).
  if(IS_DIRECTORY "${root}/lessons/${lesson}/figures")
    file(COPY "${root}/lessons/${lesson}/figures" DESTINATION "${stage}/lessons/${lesson}")
  endif()
  if(EXISTS "${root}/lessons/${lesson}/notes.md")
    file(COPY "${root}/lessons/${lesson}/notes.md" DESTINATION "${stage}/lessons/${lesson}")
  endif()
  if(EXISTS "${root}/lessons/${lesson}/going_further/main.cu")  # with its figures/ and notes.md, if any
    file(COPY "${root}/lessons/${lesson}/going_further/" DESTINATION "${stage}/lessons/${lesson}/going_further"
         PATTERN "ncu*.sh" EXCLUDE)
    list(APPEND companions "${lesson}/going_further")
  endif()
endforeach()
# The pages rewritten below: each lesson's and packed companion's README.md and notes.md.
set(pages "")
foreach(folder IN LISTS lessons companions)
  foreach(page README.md notes.md)
    if(EXISTS "${root}/lessons/${folder}/${page}")
      list(APPEND pages "${folder}/${page}")
    endif()
  endforeach()
endforeach()

# Each lesson's README (and its notes.md), as the pack needs it, made from the very same file:
#  - In the pack, lesson NN's program is the student's exercise. So `build/NN_name` becomes
#    `build/exercise_NN_name` (its check `build/exercise_NN_name_check`, lesson 06's probe tool
#    `build/exercise_06_bank_conflicts_probes`), each target after `--target` (`NN_name NN_name_check`)
#    and ctest's `-L '^NN_name$'` name the exercise's targets and label, and `lessons/NN_name/main.cu`
#    becomes `exercises/NN_name/main.cu`. A note under the README's "## Run it" says so (and, where
#    the lesson has a probe tool, that the tool's model counts for the tile layouts are the student's).
#  - Text between the lines `<!-- REPO BEGIN -->` and `<!-- REPO END -->` is left out (it speaks of
#    what the pack does not hold: the OpenCL companion, the profiler scripts).
#  - Lines of a code block that run a lesson's profiler script (`lessons/NN_name/ncu*.sh`) are left out.
#  - A link to a file the pack does not hold keeps its text and loses the link; these are listed.
# A companion's README and notes (going_further/) get the last three, not the renames: its program
# is packed. tests/student_pack/student_pack_test.cmake then tries every command and link of the packed pages.
set(unlinked "")
foreach(page IN LISTS pages)
  get_filename_component(lesson "${page}" DIRECTORY)  # NN_name or NN_name/going_further
  file(READ "${root}/lessons/${page}" text)
  while(TRUE)
    string(FIND "${text}" "\n<!-- REPO BEGIN -->\n" begin)
    if(begin EQUAL -1)
      break()
    endif()
    string(FIND "${text}" "\n<!-- REPO END -->\n" end)
    if(end LESS begin)
      message(FATAL_ERROR "make_student_pack: lessons/${page}: <!-- REPO BEGIN --> without a <!-- REPO END --> after it")
    endif()
    math(EXPR after "${end} + 18")  # past "\n<!-- REPO END -->", keeping the newline after it
    string(SUBSTRING "${text}" 0 ${begin} head)
    string(SUBSTRING "${text}" ${after} -1 tail)
    set(text "${head}${tail}")
  endwhile()
  if(text MATCHES "<!-- REPO (BEGIN|END) -->")
    message(FATAL_ERROR "make_student_pack: lessons/${page}: a stray ${CMAKE_MATCH_0} (each on a line of its own, in pairs)")
  endif()
  if(NOT lesson MATCHES "/going_further$")
    string(REGEX REPLACE "build/([0-9][0-9]_[a-z0-9_]+)" "build/exercise_\\1" text "${text}")
    while(TRUE)  # one target after --target at a time: `--target NN_a NN_b` takes two rounds
      string(REGEX REPLACE "(--target( exercise_[0-9][0-9]_[a-z0-9_]+)*) ([0-9][0-9]_[a-z0-9_]+)" "\\1 exercise_\\3" renamed "${text}")
      if(renamed STREQUAL text)
        break()
      endif()
      set(text "${renamed}")
    endwhile()
    string(REGEX REPLACE "'\\^([0-9][0-9]_[a-z0-9_]+)\\$'" "'^exercise_\\1$'" text "${text}")
    string(REGEX REPLACE "lessons/([0-9][0-9]_[a-z0-9_]+)/main\\.cu" "exercises/\\1/main.cu" text "${text}")
    if(page MATCHES "/README\\.md$")
      set(probes "")
      if(EXISTS "${root}/lessons/${lesson}/probes.cu")
        set(probes "\nIts probe tool, `exercise_${lesson}_probes`, is built from it too: the model's counts for the\npadded and swizzled tile probes are those of your layouts (a stub's until you write them).")
      endif()
      string(REPLACE "\n## Run it\n\n" "\n## Run it\n\nIn this pack the lesson's program is your exercise, `exercise_${lesson}`, built from\n[`exercises/${lesson}/main.cu`](../../exercises/${lesson}/main.cu): until you have written its kernels,\nits GPU checks fail and its timings mean nothing.${probes}\n\n" text "${text}")
    endif()
  endif()
  string(REGEX REPLACE "\n(lessons/[0-9][0-9]_[a-z0-9_/]+/)?ncu[a-z_]*\\.sh [^\n]*" "" text "${text}")
  # HTML comments (the figure markers) stand aside while links are found: a link's text may hold
  # one, brackets and all ("[lines <!-- q: span(f, "[(]x[)]") -->28–34<!-- /q -->](main.cu)").
  set(masked "")
  set(comments 0)
  while(TRUE)
    string(FIND "${text}" "<!--" open)
    if(open EQUAL -1)
      break()
    endif()
    string(SUBSTRING "${text}" 0 ${open} head)
    string(SUBSTRING "${text}" ${open} -1 text)
    string(FIND "${text}" "-->" close)
    if(close EQUAL -1)  # an unclosed comment: the rest stays as it is
      string(APPEND masked "${head}")
      break()
    endif()
    math(EXPR length "${close} + 3")
    string(SUBSTRING "${text}" 0 ${length} comment_${comments})
    string(SUBSTRING "${text}" ${length} -1 text)
    string(APPEND masked "${head}{{comment ${comments}}}")
    math(EXPR comments "${comments} + 1")
  endwhile()
  set(text "${masked}${text}")
  # Brackets and semicolons stand in for themselves while the links are a CMake list, where a
  # "[" would join list elements ("[![badge](...)](...)") and a ";" would split one; and "<", so
  # that a link's text may hold one ("[`tile<32>`](...)").
  string(REPLACE "<" "{{lt}}" text "${text}")
  string(REPLACE "[" "<open>" text "${text}")
  string(REPLACE "]" "<close>" text "${text}")
  string(REPLACE ";" "{{semicolon}}" text "${text}")
  string(REGEX MATCHALL "<open>[^<\n]*<close>\\([^)\n]*\\)" links "${text}")
  foreach(link IN LISTS links)
    string(REGEX MATCH "^<open>([^<]*)<close>\\(([^)#]*)" _ "${link}")
    set(label "${CMAKE_MATCH_1}")
    set(target "${CMAKE_MATCH_2}")
    if(target STREQUAL "" OR target MATCHES "^[a-z]+:")
      continue()  # an anchor in the same page, or a web address
    endif()
    get_filename_component(resolved "${stage}/lessons/${lesson}/${target}" ABSOLUTE)
    if(NOT EXISTS "${resolved}" AND NOT EXISTS "${root}/lessons/${lesson}/${target}")
      message(FATAL_ERROR "make_student_pack: lessons/${page} links to ${target}, which the course does not have")
    endif()
    if(NOT EXISTS "${resolved}")
      string(REPLACE "${link}" "${label}" text "${text}")
      list(APPEND unlinked "lessons/${page}: ${target}")
    endif()
  endforeach()
  string(REPLACE "<open>" "[" text "${text}")
  string(REPLACE "<close>" "]" text "${text}")
  string(REPLACE "{{semicolon}}" ";" text "${text}")
  string(REPLACE "{{lt}}" "<" text "${text}")
  foreach(n RANGE ${comments})
    if(n LESS comments)
      string(REPLACE "{{comment ${n}}}" "${comment_${n}}" text "${text}")
    endif()
  endforeach()
  file(WRITE "${stage}/lessons/${page}" "${text}")
endforeach()
if(unlinked)
  list(REMOVE_DUPLICATES unlinked)
  list(JOIN unlinked "\n  " text)
  message(STATUS "student pack: links to files the pack leaves out, kept as plain text:\n  ${text}")
endif()

# A pack must never carry a solution or a grading tool: refuse rather than pack one.
file(GLOB_RECURSE leaked RELATIVE "${stage_root}" "${stage}/lessons/*/main.cu" "${stage}/*grade*")
list(FILTER leaked EXCLUDE REGEX "^${name}/lessons/[0-9][0-9]_[a-z0-9_]+/going_further/main\\.cu$")  # packed on purpose
if(leaked)
  message(FATAL_ERROR "make_student_pack: refusing to pack ${leaked}")
endif()

file(REMOVE "${OUT}")
execute_process(COMMAND ${CMAKE_COMMAND} -E tar czf "${OUT}" "${name}" WORKING_DIRECTORY "${stage_root}"
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "make_student_pack: cmake -E tar failed")
endif()
file(REMOVE_RECURSE "${stage_root}")
message(STATUS "student pack: ${OUT} (unpack it, then see ${name}/README.md)")
