# oclgrind_check.cmake — one CTest test: run the OpenCL companion under Oclgrind and judge both
# what Oclgrind reports and how the program exits.
#
#   cmake -DOCLGRIND=/usr/bin/oclgrind -DPROGRAM=.../02_shared_transpose_opencl -DEXPECT=clean|race
#         -P oclgrind_check.cmake
#
# EXPECT=clean: every kernel the program runs by default, on a shape that is a multiple of no
#   tile; Oclgrind must report nothing (no data race, no out-of-bounds or uninitialized access,
#   no API misuse) and the program must exit 0 (every output matched the CPU).
# EXPECT=race: only transpose_tiled_racy (the padded tile without its barrier); Oclgrind must
#   report a data race in it, and the program must still end normally (exit 0 or 1: whether the
#   race also corrupts the output depends on the order the simulator runs work-items in).
# Oclgrind's messages go to their own log file (--log), so "reported nothing" means "empty log".
foreach(var OCLGRIND PROGRAM EXPECT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "oclgrind_check.cmake: -D${var}=... is required")
  endif()
endforeach()

set(log ${CMAKE_CURRENT_BINARY_DIR}/oclgrind_${EXPECT}.log)
file(REMOVE ${log})
set(args --rows 37 --cols 45 --warmup 0 --repeats 1)
if(EXPECT STREQUAL "clean")  # every check Oclgrind has
  set(checks --data-races --uninitialized --check-api --max-errors 8)
elseif(EXPECT STREQUAL "race")
  # Only the race detector: with --uninitialized the racy kernel's reads of tile elements that
  # nobody has written yet are reported first, and those reports would use up --max-errors.
  set(checks --data-races --max-errors 4)
  list(APPEND args --kernel transpose_tiled_racy)
else()
  message(FATAL_ERROR "oclgrind_check.cmake: EXPECT must be clean or race, not '${EXPECT}'")
endif()

set(command ${OCLGRIND} ${checks} --log ${log} ${PROGRAM} ${args})
list(JOIN command " " command_text)
message("$ ${command_text}")
execute_process(COMMAND ${command} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
set(report "")
if(EXISTS ${log})
  file(READ ${log} report)
endif()
message("${out}")
message("--- Oclgrind's report (${log}) ---\n${report}--- end of report; the program exited with ${rc} ---")

if(EXPECT STREQUAL "clean")
  if(NOT report STREQUAL "")
    message(FATAL_ERROR "FAILED: Oclgrind reported errors in kernels that should be correct (above)")
  endif()
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "FAILED: the program exited with ${rc} under Oclgrind, expected 0")
  endif()
  message("PASSED: every kernel ran clean under Oclgrind and matched the CPU reference")
else()
  if(NOT report MATCHES "data race" OR NOT report MATCHES "Kernel: transpose_tiled_racy")
    message(FATAL_ERROR "FAILED: Oclgrind did not report the data race in transpose_tiled_racy")
  endif()
  if(NOT (rc EQUAL 0 OR rc EQUAL 1))
    message(FATAL_ERROR "FAILED: the program exited with '${rc}' under Oclgrind, expected 0 or 1")
  endif()
  message("PASSED: Oclgrind reported the data race in transpose_tiled_racy")
endif()
