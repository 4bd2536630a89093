# course_lessons.cmake — lessons/lessons.txt for CMake, read by its one reader, grading/lessons.py.
#
#   include(cmake/course_lessons.cmake)
#   course_read_lessons(<lessons.txt> <out dir>)
#       runs `python3 -m grading.lessons cmake <lessons.txt> <out dir>`, which writes
#       <out dir>/course_lessons.cmake (included here: COURSE_GRADABLE_LESSONS, in the file's order,
#       and COURSE_HIDDEN_SHAPE_ARITY_<lesson>) and <out dir>/course_lessons.hpp (the checks' C++).
#       A malformed file, or no Python 3, stops the configure with a message that says why.
#   cmake -DLESSONS_FILE=<lessons.txt> -DOUT=<out dir> -P cmake/course_lessons.cmake
#       the same in script mode (grading/tests/test_lessons.py tries the configure's path with it)
include(${CMAKE_CURRENT_LIST_DIR}/course_find_python.cmake)
set(course_lessons_root ${CMAKE_CURRENT_LIST_DIR}/..)

macro(course_read_lessons lessons_file out_dir)
  course_find_python(course_lessons_python "import sys; assert sys.version_info >= (3, 8)" "${COURSE_PYTHON}")
  if(NOT course_lessons_python)
    message(FATAL_ERROR "The course's configure needs Python 3.8 or newer (python3 on PATH, or -DCOURSE_PYTHON=/path/to/python3): "
                        "it reads lessons/lessons.txt (grading/lessons.py). Debian/Ubuntu: apt install python3")
  endif()
  if(NOT EXISTS ${course_lessons_root}/grading/lessons.py)
    message(FATAL_ERROR "The course's configure reads lessons/lessons.txt with grading/lessons.py, which this tree lacks")
  endif()
  execute_process(COMMAND ${course_lessons_python} -B -m grading.lessons cmake ${lessons_file} ${out_dir}
                  WORKING_DIRECTORY ${course_lessons_root} RESULT_VARIABLE course_lessons_rc ERROR_VARIABLE course_lessons_error)
  if(NOT course_lessons_rc EQUAL 0)
    string(STRIP "${course_lessons_error}" course_lessons_error)
    message(FATAL_ERROR "grading/lessons.py refused the list of lessons: ${course_lessons_error}")
  endif()
  include(${out_dir}/course_lessons.cmake)
endmacro()

if(CMAKE_SCRIPT_MODE_FILE STREQUAL CMAKE_CURRENT_LIST_FILE)
  course_read_lessons(${LESSONS_FILE} ${OUT})
  message(STATUS "lessons: ${COURSE_GRADABLE_LESSONS}")
endif()
