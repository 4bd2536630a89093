# make_exercises.cmake — writes the student versions of the lessons (CMake script mode: the course
# needs nothing else).
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

# CMake lists are ';'-separated, and '[', ']' and '\' change how a list splits, so the source is
# read with those four characters swapped for control characters, and swapped back on output.
string(ASCII 1 esc_semicolon)
string(ASCII 2 esc_open)
string(ASCII 3 esc_close)
string(ASCII 4 esc_backslash)
function(escape_code text out_var)
  string(REPLACE "\\" "${esc_backslash}" text "${text}")
  string(REPLACE ";" "${esc_semicolon}" text "${text}")
  string(REPLACE "[" "${esc_open}" text "${text}")
  string(REPLACE "]" "${esc_close}" text "${text}")
  set(${out_var} "${text}" PARENT_SCOPE)
endfunction()
function(unescape_code text out_var)
  string(REPLACE "${esc_backslash}" "\\" text "${text}")
  string(REPLACE "${esc_semicolon}" ";" text "${text}")
  string(REPLACE "${esc_open}" "[" text "${text}")
  string(REPLACE "${esc_close}" "]" text "${text}")
  set(${out_var} "${text}" PARENT_SCOPE)
endfunction()

# Reads `input`, replaces its regions; sets out_var to the exercise text, or error_var to
# "<display>:<line>: <message>" (and out_var to nothing).
function(generate_exercise input display out_var error_var)
  set(${out_var} "" PARENT_SCOPE)
  set(${out_var}_hints "" PARENT_SCOPE)
  set(${error_var} "" PARENT_SCOPE)
  set(hints "")
  file(READ "${input}" text)
  escape_code("${text}" text)
  string(REPLACE "\n" ";" lines "${text}")

  set(out "")
  set(number 0)
  set(in_region FALSE)
  set(ids "")
  list(LENGTH lines count)
  foreach(line IN LISTS lines)
    math(EXPR number "${number} + 1")
    set(newline "\n")
    if(number EQUAL count)
      set(newline "")  # the text after the last newline (empty when the file ends with one)
    endif()
    set(fail "")
    if(line MATCHES "^([ \t]*)// EXERCISE ([A-Z]+)(.*)$")
      set(indent "${CMAKE_MATCH_1}")
      set(keyword "${CMAKE_MATCH_2}")
      set(rest "${CMAKE_MATCH_3}")
      if(keyword STREQUAL "BEGIN")
        if(in_region)
          set(fail "EXERCISE BEGIN inside region ${id} (opened at line ${begin_line}): regions do not nest")
        elseif(NOT rest MATCHES "^ ([0-9][0-9]\\.[a-z0-9_]+): (.*[^ ].*)$")
          set(fail "malformed EXERCISE BEGIN: write `// EXERCISE BEGIN NN.name: what to write`")
        else()
          set(id "${CMAKE_MATCH_1}")
          set(what "${CMAKE_MATCH_2}")
          if(id IN_LIST ids)
            set(fail "region id ${id} is used twice in this file")
          endif()
          list(APPEND ids "${id}")
          set(in_region TRUE)
          set(begin_line ${number})
          set(begin_indent "${indent}")
          set(todo "${indent}// TODO(${id}): ${what}\n")
          set(stub "")
        endif()
      elseif(keyword STREQUAL "TODO" OR keyword STREQUAL "STUB")
        if(NOT in_region)
          set(fail "EXERCISE ${keyword} outside a region (no EXERCISE BEGIN before it)")
        elseif(NOT rest MATCHES "^:( (.*))?$")
          set(fail "malformed EXERCISE ${keyword}: write `// EXERCISE ${keyword}: text`")
        elseif(keyword STREQUAL "TODO")
          string(APPEND todo "${begin_indent}//   ${CMAKE_MATCH_2}\n")
        elseif(CMAKE_MATCH_2 STREQUAL "")
          string(APPEND stub "\n")
        else()
          string(APPEND stub "${indent}${CMAKE_MATCH_2}\n")
        endif()
      elseif(keyword STREQUAL "HINT")
        if(NOT in_region)
          set(fail "EXERCISE HINT outside a region (no EXERCISE BEGIN before it)")
        elseif(NOT rest MATCHES "^: (.*[^ ].*)$")
          set(fail "malformed EXERCISE HINT: write `// EXERCISE HINT: one hint, on one line`")
        else()
          string(APPEND hints "${id}: ${CMAKE_MATCH_1}\n")
        endif()
      elseif(keyword STREQUAL "END")
        if(NOT in_region)
          set(fail "EXERCISE END without an EXERCISE BEGIN")
        elseif(NOT rest STREQUAL "")
          set(fail "malformed EXERCISE END: nothing may follow it")
        else()
          set(in_region FALSE)
          string(APPEND out "${todo}${stub}")
        endif()
      else()
        set(fail "unknown marker EXERCISE ${keyword} (known: BEGIN, TODO, STUB, HINT, END)")
      endif()
    elseif(line MATCHES "// EXERCISE[ :]")
      set(fail "an EXERCISE marker must be on a line of its own")
    elseif(line MATCHES "^[ \t]*// SITE MODEL (BEGIN|END)")
      # the course site's markers (site/README.md): they concern the lesson, not the exercise
    elseif(NOT in_region)
      string(APPEND out "${line}${newline}")
    endif()
    if(NOT fail STREQUAL "")
      unescape_code("${fail}" fail)
      set(${error_var} "${display}:${number}: ${fail}" PARENT_SCOPE)
      return()
    endif()
  endforeach()
  if(in_region)
    set(${error_var} "${display}:${begin_line}: region ${id} is never closed (no EXERCISE END after it)" PARENT_SCOPE)
    return()
  endif()
  unescape_code("${out}" out)
  unescape_code("${hints}" hints)
  set(${out_var} "${out}" PARENT_SCOPE)
  set(${out_var}_hints "${hints}" PARENT_SCOPE)
endfunction()

function(refuse message_text)
  message(NOTICE "${message_text}")
  message(FATAL_ERROR "make_exercises: refused; nothing was written")
endfunction()

# ---------------------------------------------------------------- one file
if(DEFINED INPUT)
  if(NOT DEFINED OUTPUT)
    message(FATAL_ERROR "make_exercises: INPUT needs OUTPUT")
  endif()
  generate_exercise("${INPUT}" "${INPUT}" text error)
  if(error)
    refuse("${error}")
  endif()
  file(WRITE "${OUTPUT}" "${text}")
  if(DEFINED HINTS)
    file(WRITE "${HINTS}" "${text_hints}")
  endif()
  return()
endif()

# ---------------------------------------------------------------- every lesson
file(GLOB lesson_sources RELATIVE "${course_root}" "${course_root}/lessons/[0-9][0-9]_*/main.cu")
list(SORT lesson_sources)
if(NOT lesson_sources)
  message(FATAL_ERROR "make_exercises: no lessons/NN_name/main.cu under ${course_root} (the student pack has none)")
endif()
set(targets "")
foreach(source IN LISTS lesson_sources)
  get_filename_component(folder "${source}" DIRECTORY)
  get_filename_component(name "${folder}" NAME)
  string(SUBSTRING "${name}" 0 2 number)
  generate_exercise("${course_root}/${source}" "${source}" body error)
  if(error)
    refuse("${error}")
  endif()
  string(CONCAT header
    "// Exercise ${name}: generated from ${source} by scripts/make_exercises.cmake.\n"
    "// Write the code each TODO(${number}.*) asks for; exercises/${name}/README.md says what \"solved\" means\n"
    "// and has hints. Check it: scripts/exercises.sh check ${number}    All of them: scripts/exercises.sh\n")
  set(text_${name} "${header}${body}")
  set(hints_${name} "")
  if(NOT body_hints STREQUAL "")
    set(hints_${name} "# Hints for exercise ${name}, from the EXERCISE HINT lines of ${source} (scripts/make_exercises.cmake).\n# scripts/exercises.sh hint ${number} shows them one at a time; each line is <region>: <hint>.\n${body_hints}")
  endif()
  list(APPEND targets "${name}")
endforeach()

# One exercise's main.cu, as it is given, to OUTPUT (scripts/exercises.sh reset).
if(DEFINED LESSON)
  if(NOT DEFINED OUTPUT OR NOT LESSON IN_LIST targets)
    message(FATAL_ERROR "make_exercises: LESSON needs OUTPUT and one of: ${targets}")
  endif()
  file(WRITE "${OUTPUT}" "${text_${LESSON}}")
  return()
endif()

set(stale "")
foreach(name IN LISTS targets)
  set(target "${course_root}/exercises/${name}/main.cu")
  set(current "")
  if(EXISTS "${target}")
    file(READ "${target}" current)
  endif()
  if(NOT current STREQUAL text_${name})
    if(CHECK)
      list(APPEND stale "exercises/${name}/main.cu")
    else()
      file(WRITE "${target}" "${text_${name}}")
      message(STATUS "wrote exercises/${name}/main.cu")
    endif()
  endif()
  # hints.txt: written when the lesson has hints, removed when it has none.
  set(hints_file "${course_root}/exercises/${name}/hints.txt")
  set(current "")
  if(EXISTS "${hints_file}")
    file(READ "${hints_file}" current)
  endif()
  if(NOT current STREQUAL hints_${name} OR (EXISTS "${hints_file}" AND hints_${name} STREQUAL ""))
    if(CHECK)
      list(APPEND stale "exercises/${name}/hints.txt")
    elseif(hints_${name} STREQUAL "")
      file(REMOVE "${hints_file}")
      message(STATUS "removed exercises/${name}/hints.txt (its lesson has no EXERCISE HINT lines)")
    else()
      file(WRITE "${hints_file}" "${hints_${name}}")
      message(STATUS "wrote exercises/${name}/hints.txt")
    endif()
  endif()
endforeach()

if(CHECK)
  if(stale)
    foreach(file IN LISTS stale)
      message(NOTICE "stale: ${file} differs from what its lesson generates")
    endforeach()
    message(FATAL_ERROR "make_exercises: the exercises above are out of date with their lessons; "
                        "run `cmake -P scripts/make_exercises.cmake` and commit the result")
  endif()
  list(LENGTH targets n)
  message(STATUS "all ${n} exercises are up to date with their lessons")
endif()
