# The toy "compiler": fails on DOES_NOT_COMPILE; with OUT, writes the toy check program there.
file(READ "${SOURCE}" text)
if(text MATCHES "DOES_NOT_COMPILE")
  message(FATAL_ERROR "${SOURCE}:1: error: this toy exercise does not compile")
endif()
if(DEFINED OUT)
  file(WRITE "${OUT}" "#!/bin/sh\n# the toy check: host checks pass; the \"GPU\" check passes once main.cu doubles\n"
       "case \"$1\" in\n  --host) exit 0 ;;\nesac\n"
       "if grep -q 'out\\[i\\] = 2 \\* in\\[i\\]' '${SOURCE}'; then echo '[doctest] test cases: 1 | 1 passed'; exit 0; fi\n"
       "printf '===============================================================================\\nmain.cu:1:\\nTEST CASE:  doubles\\n\\nmain.cu:2: ERROR: CHECK( out == 2 * in ) is NOT correct!\\n\\n'\nexit 1\n")
  file(CHMOD "${OUT}" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)
endif()
