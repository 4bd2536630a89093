# check_plots.cmake — the plots check (CTest: plots.*). Runs scripts/plots.py on a results CSV
# into an emptied folder, then checks what it wrote without trusting the script's own account:
# a PNG file (by its 8-byte signature, and not a stub) for every lesson the CSV holds, as many
# lesson charts as lessons, course.png, and the stride and sweep charts where the CSV has their rows.
#
#   cmake -DPYTHON=python3 -DSCRIPT=scripts/plots.py -DCSV=results/h200/results.csv -DOUT=<folder>
#         [-DMODE=committed_csv|optional_charts|default_csv|without_matplotlib] -P check_plots.cmake
#
# MODE=optional_charts first appends to a copy of the CSV a lesson 06 stride table, and a default
# table and a size sweep of lesson 05's companion (05_tiled_matmul_going_further), with made-up
# numbers (they exist only in OUT), and then also expects the companion's chart and the two drawn
# only when such rows are present: 06_bank_conflicts_strides.png and
# 05_tiled_matmul_going_further_sweep.png.
# MODE=default_csv runs the script without --csv from OUT, another folder than the repository's:
# it must still find its default CSV (CSV names it here, to know what to expect).
# MODE=without_matplotlib runs it under PYTHON with its site packages hidden (-I -S), so without
# matplotlib, from OUT: it must exit non-zero with one line that says so, and no traceback. If
# matplotlib can still be imported that way, it prints "SKIPPED: ..." (CTest: skipped).
cmake_minimum_required(VERSION 3.25)

foreach(var PYTHON SCRIPT OUT)
  if(NOT ${var})
    message(FATAL_ERROR "check_plots.cmake: -D${var}=... is required")
  endif()
endforeach()
file(REMOVE_RECURSE "${OUT}")
file(MAKE_DIRECTORY "${OUT}")

if(MODE STREQUAL "without_matplotlib")
  execute_process(COMMAND "${PYTHON}" -I -S -c "import matplotlib" RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
  if(rc EQUAL 0)
    message("SKIPPED: ${PYTHON} -I -S still imports matplotlib, so its absence cannot be shown with it")
    return()
  endif()
  execute_process(COMMAND "${PYTHON}" -I -S "${SCRIPT}" --out "${OUT}/plots" WORKING_DIRECTORY "${OUT}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(STRIP "${err}" err)
  message("plots.py without matplotlib: exit ${rc}, stdout '${out}', stderr:\n${err}")
  if(rc EQUAL 0 OR NOT out STREQUAL "" OR err MATCHES "\n" OR err MATCHES "Traceback"
     OR NOT err MATCHES "^plots\\.py: matplotlib is missing from .*pip install matplotlib")
    message(FATAL_ERROR "expected a non-zero exit and one line 'plots.py: matplotlib is missing from ...' on stderr")
  endif()
  message("ok: one line, exit code ${rc}")
  return()
endif()
if(NOT CSV)
  message(FATAL_ERROR "check_plots.cmake: -DCSV=... is required")
endif()

set(csv "${CSV}")
set(expected_extra "")
if(MODE STREQUAL "optional_charts")
  set(csv "${OUT}/with_optional_tables.csv")
  file(READ "${CSV}" text)
  set(gpu "\"Test GPU (sm_00, CUDA 0.0)\"")
  set(problem "stride microbenchmark: every lane loads s[lane * stride]; rate = time / time at stride 1")
  foreach(pair IN ITEMS 1:1 2:2 3:1 4:4 32:32 0:1)  # stride:degree, slowdown = degree
    string(REPLACE ":" ";" pair "${pair}")
    list(GET pair 0 stride)
    list(GET pair 1 degree)
    string(APPEND text "06_bank_conflicts,${gpu},${problem},\"s[lane * ${stride}], model degree ${degree}\",1,${degree},x stride 1,-1,ok\n")
  endforeach()
  set(gf 05_tiled_matmul_going_further)
  string(APPEND text "${gf},${gpu},\"4096 x 4096 x 4096 (M x N x K) fp32 matmul\",cuBLAS SGEMM (fp32),1,50,TFLOP/s,100,ok\n"
                     "${gf},${gpu},\"4096 x 4096 x 4096 (M x N x K) fp32 matmul\",pipelined 128x256x16 16x8,1,48,TFLOP/s,96,ok\n")
  foreach(size IN ITEMS 256 1024 4096 "8192 x 8192 x 64")
    if(NOT size MATCHES "x")
      set(size "${size} x ${size} x ${size}")
    endif()
    string(APPEND text "${gf},${gpu},\"sweep: ${size} fp32 matmul\",cuBLAS SGEMM (fp32),1,10,TFLOP/s,100,ok\n"
                       "${gf},${gpu},\"sweep: ${size} fp32 matmul\",warp_tiled 128x128x8 8x8,1,8,TFLOP/s,80,ok\n")
  endforeach()
  file(WRITE "${csv}" "${text}")
  set(expected_extra 06_bank_conflicts_strides ${gf}_sweep)
endif()

if(MODE STREQUAL "default_csv")  # from OUT, not the repository: the default must not depend on the folder
  execute_process(COMMAND "${PYTHON}" "${SCRIPT}" --out "${OUT}" WORKING_DIRECTORY "${OUT}" RESULT_VARIABLE rc)
else()
  execute_process(COMMAND "${PYTHON}" "${SCRIPT}" --csv "${csv}" --out "${OUT}" RESULT_VARIABLE rc)
endif()
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "plots.py exited with ${rc}")
endif()

# The lessons in the CSV: the first field of every line (a lesson name has no comma or quote).
file(READ "${csv}" text)
# The optional charts are expected exactly when the CSV holds their rows (the committed one does
# once a lesson 06 run with --csv and a --sweep are in it): a sweep chart for each lesson or
# companion with sweep rows (lesson 05 before its split, 05_tiled_matmul_going_further after).
if(text MATCHES "(^|\n)06_bank_conflicts,[^\n]*stride microbenchmark")
  list(APPEND expected_extra 06_bank_conflicts_strides)
endif()
string(REGEX MATCHALL "(^|\n)[0-9][0-9]_[A-Za-z0-9_]+,[^\n]*\"sweep: " sweep_rows "${text}")
foreach(row IN LISTS sweep_rows)
  string(REGEX MATCH "[0-9][0-9]_[A-Za-z0-9_]+" sweep_lesson "${row}")
  list(APPEND expected_extra ${sweep_lesson}_sweep)
endforeach()
list(REMOVE_DUPLICATES expected_extra)
string(REGEX MATCHALL "(^|\n)[0-9][0-9]_[A-Za-z0-9_]+," found "${text}")
set(lessons "")
foreach(match IN LISTS found)
  string(REGEX REPLACE "[\n,]" "" lesson "${match}")
  list(APPEND lessons "${lesson}")
endforeach()
list(REMOVE_DUPLICATES lessons)
list(LENGTH lessons n_lessons)
if(n_lessons EQUAL 0)
  message(FATAL_ERROR "no lesson rows in ${csv}")
endif()

set(problems "")
foreach(name IN LISTS lessons expected_extra ITEMS course)
  set(png "${OUT}/${name}.png")
  if(NOT EXISTS "${png}")
    list(APPEND problems "${name}.png missing")
    continue()
  endif()
  file(SIZE "${png}" bytes)
  file(READ "${png}" signature LIMIT 8 HEX)
  if(NOT signature STREQUAL "89504e470d0a1a0a" OR bytes LESS 10000)
    list(APPEND problems "${name}.png is not a real PNG chart (${bytes} bytes, starts ${signature})")
  endif()
endforeach()

# As many lesson charts (NN_name.png with no _strides/_sweep suffix of a lesson) as lessons.
file(GLOB pngs RELATIVE "${OUT}" "${OUT}/[0-9][0-9]_*.png")
set(n_charts 0)
foreach(png IN LISTS pngs)
  string(REGEX REPLACE "\\.png$" "" name "${png}")
  if(name IN_LIST lessons)
    math(EXPR n_charts "${n_charts} + 1")
  elseif(NOT name IN_LIST expected_extra)
    list(APPEND problems "unexpected chart ${png}")
  endif()
endforeach()
if(NOT n_charts EQUAL n_lessons)
  list(APPEND problems "${n_charts} lesson charts for ${n_lessons} lessons in the CSV")
endif()

if(problems)
  list(JOIN problems "\n  " text)
  message(FATAL_ERROR "plots check failed:\n  ${text}")
endif()
list(JOIN lessons ", " text)
message("plots check: ${n_lessons} lesson charts (${text}), course.png ${expected_extra}: all PNG files")
