# embed_cl.cmake — writes the text of transpose.cl into a C++ header as one string, so the
# program carries its kernels with it and finds them wherever it runs. CMake runs it at build
# time whenever transpose.cl changes; by hand:
#   cmake -DCL_FILE=transpose.cl -DHEADER=generated/transpose_cl.hpp -P embed_cl.cmake
foreach(var CL_FILE HEADER)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "embed_cl.cmake: -D${var}=... is required")
  endif()
endforeach()
file(READ "${CL_FILE}" text)
if(text MATCHES "\\)CLSOURCE\"")
  message(FATAL_ERROR "embed_cl.cmake: ${CL_FILE} contains )CLSOURCE\", which would end the C++ raw string early")
endif()
get_filename_component(name "${CL_FILE}" NAME)
file(WRITE "${HEADER}.tmp"
     "// Generated from ${name} by embed_cl.cmake: edit ${name}, not this file.\n"
     "#pragma once\n"
     "inline const char* const kTransposeClSource = R\"CLSOURCE(${text})CLSOURCE\";\n")
configure_file("${HEADER}.tmp" "${HEADER}" COPYONLY)  # rewrites HEADER only when its text changes
file(REMOVE "${HEADER}.tmp")
