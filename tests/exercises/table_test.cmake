# table_test.cmake — scripts/exercises.sh's progress table on canned results.
#   cmake -DINPUT=table_x.txt -DEXPECTED=table_x.expected.txt -DEXPECT_RC=1 -P table_test.cmake
# The table must be exactly EXPECTED and the exit code EXPECT_RC (0 only when everything is solved).
cmake_minimum_required(VERSION 3.25)
get_filename_component(root "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)
find_program(BASH bash REQUIRED)
execute_process(COMMAND ${BASH} ${root}/scripts/exercises.sh --table-from ${INPUT}
                RESULT_VARIABLE rc OUTPUT_VARIABLE got ERROR_VARIABLE err)
file(READ "${EXPECTED}" want)
if(NOT got STREQUAL want)
  message(FATAL_ERROR "the table for ${INPUT} is\n${got}${err}\nexpected (${EXPECTED})\n${want}")
endif()
if(NOT rc EQUAL EXPECT_RC)
  message(FATAL_ERROR "exercises.sh --table-from ${INPUT} exited ${rc}, expected ${EXPECT_RC}")
endif()
message(STATUS "ok: the table for ${INPUT} (exit ${rc})")
