cmake_minimum_required(VERSION 3.25)
# The toy "compiler": fails on DOES_NOT_COMPILE; with OUT, writes the toy check program there
# (toy_check.sh, with the exercise's path in it).
file(READ "${SOURCE}" text)
if(text MATCHES "DOES_NOT_COMPILE")
  message(FATAL_ERROR "${SOURCE}:1: error: this toy exercise does not compile")
endif()
if(DEFINED OUT)
  file(READ "${CMAKE_CURRENT_LIST_DIR}/toy_check.sh" check)
  string(REPLACE "__SOURCE__" "${SOURCE}" check "${check}")
  file(WRITE "${OUT}" "${check}")
  file(CHMOD "${OUT}" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)
endif()
