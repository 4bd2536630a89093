# verdict_test.cmake — the judge's JSON verdict, end to end, on tests/grading/verdict_fixture.cpp:
# the runner records (--record), the judge judges (--judge ... --verdict), and every field of the
# verdict is checked here with CMake's own JSON parser (which refuses invalid JSON).
#   cmake -DFIXTURE=path/to/verdict_fixture -DWORK=scratch/folder -P verdict_test.cmake
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
set(failures 0)
macro(fail text)
  message("FAIL: ${text}")
  math(EXPR failures "${failures} + 1")
endmacro()

execute_process(COMMAND "${FIXTURE}" --host --record "${WORK}/transcript.bin" --seed 7 OUTPUT_QUIET ERROR_QUIET)
execute_process(COMMAND "${FIXTURE}" --host --judge "${WORK}/transcript.bin" --seed 7 --verdict "${WORK}/verdict.json"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 1)
  fail("the judge exited ${rc}, expected 1 (some test cases fail)\n${out}${err}")
endif()
if(EXISTS "${WORK}/verdict.json.tmp")
  fail("verdict.json.tmp was left behind")
endif()
file(READ "${WORK}/verdict.json" json)
string(REGEX MATCH "\"complete\": true\n}\n$" last "${json}")
if(NOT last)
  fail("\"complete\": true is not the last key")
endif()
if(NOT json MATCHES "^[\n -~]*$")
  fail("the verdict is not printable ASCII")
endif()

# expect(<value> <json path...>): the value at that path, or fail.
function(expect want)
  string(JSON got ERROR_VARIABLE error GET "${json}" ${ARGN})
  if(error)
    set(got "(${error})")
  endif()
  if(NOT "${got}" STREQUAL "${want}")
    string(REPLACE ";" " " path "${ARGN}")
    message("FAIL: ${path}: got '${got}', expected '${want}'")
    math(EXPR failures "${failures} + 1")
    set(failures ${failures} PARENT_SCOPE)
  endif()
endfunction()

expect(1 format)
expect(ON complete)
expect(verdict_fixture lesson)
expect(7 seed)
expect(1 missing)
expect(1 inconsistent)
string(JSON cases LENGTH "${json}" test_cases)
if(NOT cases EQUAL 7)
  fail("${cases} test cases, expected 7")
endif()
# name|gpu|skipped|passed|asked|submitted|missing|inconsistent, in the fixture's order
set(rows
  "judged: two values, both right|OFF|OFF|ON|2|2|0|0"
  "(checked below, in the file's own escapes)|OFF|OFF|OFF|1|1|0|0"
  "judged: the run stops before its second value|OFF|OFF|OFF|2|1|1|0"
  "judged: a value of the wrong size|OFF|OFF|OFF|1|0|0|1"
  "the course's own test, which asks nothing of the submission|OFF|OFF|ON|0|0|0|0"
  "a course exception with a long message|OFF|OFF|OFF|0|0|0|0"
  "a GPU test case, which --host leaves out|ON|ON|OFF|0|0|0|0")
set(i 0)
foreach(row IN LISTS rows)
  string(REPLACE "|" ";" row "${row}")
  list(GET row 0 name)
  string(JSON got_name GET "${json}" test_cases ${i} name)
  if(NOT i EQUAL 1 AND NOT got_name STREQUAL name)
    fail("test case ${i}: name '${got_name}', expected '${name}'")
  endif()
  set(k 1)
  foreach(key gpu skipped passed asked submitted missing inconsistent)
    list(GET row ${k} want)
    expect(${want} test_cases ${i} ${key})
    math(EXPR k "${k} + 1")
  endforeach()
  math(EXPR i "${i} + 1")
endforeach()

expect("" test_cases 0 failure)  # null reads as an empty string
string(JSON type TYPE "${json}" test_cases 0 failure)
if(NOT type STREQUAL "NULL")
  fail("a passed test case's failure is ${type}, expected null")
endif()
# The name and message with odd bytes, as the file spells them: escaped, and U+FFFD for non-UTF-8.
foreach(text
    "{\"name\": \"judged: a \\\"wrong\\\" value \\\\ \\u0001\\u001f\\u0085\\ufffd\", \"gpu\": false"
    "CHECK( got == 42 ) failed, values: 41 == 42 (the \\\"answer\\\" says \\u007f\\ufffd)\"}")
  string(FIND "${json}" "${text}" at)
  if(at LESS 0)
    fail("the verdict does not hold: ${text}\n${json}")
  endif()
endforeach()
string(JSON failure GET "${json}" test_cases 1 failure)
if(NOT failure MATCHES "^verdict_fixture\\.cpp:[0-9]+: CHECK")
  fail("failure of test case 1: '${failure}'")
endif()
string(JSON failure GET "${json}" test_cases 2 failure)
if(NOT failure MATCHES "^verdict_fixture\\.cpp:[0-9]+: CHECK\\( submitted\\(2\\) == 2 \\) failed, it threw: \"the submission's run recorded no value #2 of this test case")
  fail("failure of test case 2: '${failure}'")
endif()
string(JSON failure GET "${json}" test_cases 3 failure)
if(NOT failure MATCHES "^exception: inconsistent transcript")
  fail("failure of test case 3: '${failure}'")
endif()
string(JSON failure GET "${json}" test_cases 5 failure)
string(LENGTH "${failure}" length)
if(NOT length EQUAL 400 OR NOT failure MATCHES "^exception: xxx.*\\.\\.\\.$")
  fail("failure of test case 5: ${length} bytes, '${failure}'")
endif()

# --gpu with no GPU: SKIPPED (77), and a verdict that lists every test case as skipped.
execute_process(COMMAND ${CMAKE_COMMAND} -E env CUDA_VISIBLE_DEVICES= COURSE_REQUIRE_GPU=0
                        "${FIXTURE}" --gpu --judge "${WORK}/transcript.bin" --seed 7 --verdict "${WORK}/skipped.json"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 77)
  fail("--gpu without a GPU exited ${rc}, expected 77\n${out}${err}")
else()
  file(READ "${WORK}/skipped.json" json)
  string(JSON cases LENGTH "${json}" test_cases)
  if(NOT cases EQUAL 7)
    fail("--gpu without a GPU: ${cases} test cases in the verdict, expected 7")
  endif()
  foreach(i RANGE 6)
    expect(ON test_cases ${i} skipped)
  endforeach()
  expect(ON test_cases 6 gpu)
  expect(ON complete)
endif()

# Without --verdict no file is written; an unwritable one is an error (exit 2), not a silent pass.
execute_process(COMMAND "${FIXTURE}" --host --verdict "${WORK}/no/such/folder/v.json" RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "--verdict")
  fail("an unwritable --verdict: exit ${rc}, '${err}'")
endif()

if(failures GREATER 0)
  message(FATAL_ERROR "verdict: ${failures} failure(s)")
endif()
message("verdict: all assertions passed")
