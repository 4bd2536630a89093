# make_student_pack.cmake — the course without its solutions, as one archive for students:
# the exercises, every lesson's README and check, common/, the CMake files and presets, and the
# student's script (scripts/exercises.sh). No lessons/*/main.cu, nothing for grading, no profiler
# scripts (they run the lessons). The CMake build of the pack builds and checks the exercises.
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

file(COPY "${root}/CMakeLists.txt" "${root}/CMakePresets.json" "${root}/common" "${root}/exercises"
     DESTINATION "${stage}")
file(COPY "${root}/scripts/exercises.sh" "${root}/scripts/run_lessons.cmake" DESTINATION "${stage}/scripts")
file(COPY "${root}/results/h200/lessons.txt" "${root}/results/h200/plots" DESTINATION "${stage}/results/h200")  # the speeds and charts the READMEs show
file(COPY_FILE "${root}/scripts/student_pack/README.md" "${stage}/README.md")
file(GLOB lessons RELATIVE "${root}/lessons" "${root}/lessons/[0-9][0-9]_*")
foreach(lesson IN LISTS lessons)
  file(COPY "${root}/lessons/${lesson}/README.md" "${root}/lessons/${lesson}/check.cu"
       DESTINATION "${stage}/lessons/${lesson}")
endforeach()

# A pack must never carry a solution or a grading tool: refuse rather than pack one.
file(GLOB_RECURSE leaked RELATIVE "${stage_root}" "${stage}/lessons/*/main.cu" "${stage}/*grade*")
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
