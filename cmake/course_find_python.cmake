# Included by the course's CMakeLists.txt and by site/CMakeLists.txt (which also builds alone).
# course_find_python(<var> <python code> [<preferred>...]): the first Python among the preferred
# ones (a path the user gave), python3 on PATH and /usr/bin/python3 that runs <python code> without
# an error (e.g. "import matplotlib"); "" if none does. Used by the plots, notebook and site checks.
find_program(COURSE_PYTHON_ON_PATH NAMES python3 python)
function(course_find_python var code)
  set(found "")
  foreach(candidate IN ITEMS ${ARGN} "${COURSE_PYTHON_ON_PATH}" /usr/bin/python3)
    if(candidate AND NOT found)
      execute_process(COMMAND ${candidate} -c "${code}" RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
      if(rc EQUAL 0)
        set(found ${candidate})
      endif()
    endif()
  endforeach()
  set(${var} "${found}" PARENT_SCOPE)
endfunction()
