# make_exercises.cmake — writes the student versions of the lessons. The markers are read, and the
# exercises written, by grading/regions.py (the one reader of the markers, which the mutants and the
# lint read them through too); this script finds a Python 3 and runs it.
#
#   cmake -P scripts/make_exercises.cmake              write exercises/NN_name/main.cu from lessons/NN_name/main.cu
#   cmake -DCHECK=ON -P scripts/make_exercises.cmake   write nothing; name every exercise that differs from what
#                                                      its lesson generates, exit non-zero if one does
#   cmake -DINPUT=in.cu -DOUTPUT=out.cu -P scripts/make_exercises.cmake    one file (the generator's tests)
#   cmake -DLESSON=NN_name -DOUTPUT=out.cu -P scripts/make_exercises.cmake one exercise, as committed (exercises.sh reset)
#
# The markers. A lesson's main.cu stays the complete lesson; the code a student writes is marked
# by comment lines, each on a line of its own:
#
#   // EXERCISE BEGIN <id>: <what to write, one line>      id: NN.name, e.g. 02.tiled; unique in the file
#   // EXERCISE TODO: <more of the TODO comment>           any number: details, and what the check tests
#   // EXERCISE STUB: <a line of code>                     any number: what the exercise has instead
#   // EXERCISE HINT: <one hint, one line>                 any number, anywhere in the region, in the order
#                                                          `scripts/exercises.sh hint NN` reveals them
#   ...the solution, untouched...
#   // EXERCISE END
#
# So that the markers stay out of a reader's way, a region may say only `// EXERCISE BEGIN <id>` and
# leave its text to exercise_todos.txt beside the file: a line `<id>: <what to write>`, then each
# TODO line indented by two spaces (`#` starts a comment line). An entry no region uses is refused.
# There, a hint is a line `  HINT: <one hint>`, which becomes no TODO line (see HINT above).
#
# In the exercise the whole region (markers and solution) becomes, at the BEGIN line's indentation:
#
#   // TODO(<id>): <what to write>
#   //   <each TODO line>
#   <each STUB line: the text after "STUB: ", indented like the STUB marker>
#
# The hints are not in the exercise's main.cu: they go to exercises/NN_name/hints.txt, one
# `<id>: <hint>` line each, which `scripts/exercises.sh hint NN` shows one at a time (the one-file
# mode writes them to HINTS, when given). The course site's `// SITE MODEL BEGIN` / `// SITE MODEL END` lines (site/README.md) are left out.
# Every other line is copied byte for byte. With no STUB lines the region becomes a comment only,
# so mark the body of a void kernel: it compiles, writes nothing, and the poisoned output makes its
# checks fail until it is written. A region that must return something gets a STUB line (e.g.
# `return nanf("");`). Refused, with `file:line: message` and a non-zero exit, and nothing written:
# a BEGIN inside a region, an END or TODO or STUB outside one, a region never closed, a repeated
# or malformed id, an unknown EXERCISE keyword, and a marker that shares its line with code.
cmake_minimum_required(VERSION 3.25)

get_filename_component(course_root "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
find_program(make_exercises_python NAMES python3 python)
if(make_exercises_python)
  execute_process(COMMAND ${make_exercises_python} -c "import sys; assert sys.version_info >= (3, 8)"
                  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
  if(NOT rc EQUAL 0)
    set(make_exercises_python "")
  endif()
endif()
if(NOT make_exercises_python)
  message(FATAL_ERROR "make_exercises: needs Python 3.8 or newer (python3 on PATH), which reads the EXERCISE markers "
                      "(grading/regions.py); install it (Debian/Ubuntu: apt install python3)")
endif()

# Paths relative to the caller's folder made absolute (Python runs in the course's); an error names
# INPUT as it was given.
set(arguments "")
if(DEFINED INPUT)
  if(NOT DEFINED OUTPUT)
    message(FATAL_ERROR "make_exercises: INPUT needs OUTPUT")
  endif()
  get_filename_component(input "${INPUT}" ABSOLUTE)
  get_filename_component(output "${OUTPUT}" ABSOLUTE)
  set(arguments exercise --where "${INPUT}" "${input}" "${output}")
  if(DEFINED HINTS)
    get_filename_component(hints "${HINTS}" ABSOLUTE)
    list(APPEND arguments "${hints}")
  endif()
elseif(DEFINED LESSON)
  if(NOT DEFINED OUTPUT)
    message(FATAL_ERROR "make_exercises: LESSON needs OUTPUT")
  endif()
  get_filename_component(output "${OUTPUT}" ABSOLUTE)
  set(arguments lesson "${LESSON}" "${output}")
elseif(CHECK)
  set(arguments check)
else()
  set(arguments write)
endif()
execute_process(COMMAND ${make_exercises_python} -B -m grading.regions ${arguments}
                WORKING_DIRECTORY "${course_root}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  if(DEFINED INPUT OR NOT CHECK)
    message(FATAL_ERROR "make_exercises: refused; nothing was written")
  endif()
  message(FATAL_ERROR "make_exercises: the exercises are out of date with their lessons")
endif()
