# Sanitizer builds (make test-asan, make test-tsan; scripts/test_sanitizer.sh runs them).
# ZT_SANITIZE is a comma-separated list of -fsanitize= values: `address,undefined` or `thread`
# (they cannot be combined: ThreadSanitizer and AddressSanitizer each own the shadow memory).
# Empty, the default, is the normal build and adds nothing.
#
# Every object is instrumented, tests and programs alike, because a race or an overflow in the
# code under test is usually seen from both sides. Only the uninstrumented Debian libraries
# (Gloo, OpenBLAS, libstdc++) stay as they are.
set(ZT_SANITIZE "" CACHE STRING "sanitizers for the whole build: address,undefined | thread | empty")
if(ZT_SANITIZE)
  string(REPLACE "," ";" zt_sanitizers "${ZT_SANITIZE}")
  if("thread" IN_LIST zt_sanitizers AND "address" IN_LIST zt_sanitizers)
    message(FATAL_ERROR "ZT_SANITIZE=${ZT_SANITIZE}: thread and address cannot share one build")
  endif()
  # -fno-sanitize-recover=all: a UBSan finding aborts the process (exit status non-zero), so it
  # fails the test instead of printing a line that nobody reads. Frame pointers give the reports
  # full stacks through the optimised code (-O2 from RelWithDebInfo, -g for file:line).
  set(zt_san_flags -fno-sanitize-recover=all -fno-omit-frame-pointer -g)
  set(zt_san_cuda_host -Xcompiler=-fno-omit-frame-pointer)
  foreach(s IN LISTS zt_sanitizers)
    list(APPEND zt_san_flags -fsanitize=${s})
    # nvcc splits an -Xcompiler value at commas, so each sanitizer is passed to the host compiler
    # on its own: the host half of the .cu files is instrumented like every other object.
    list(APPEND zt_san_cuda_host -Xcompiler=-fsanitize=${s})
  endforeach()
  add_compile_options("$<$<COMPILE_LANGUAGE:CXX>:${zt_san_flags}>"
                      "$<$<COMPILE_LANGUAGE:CUDA>:${zt_san_cuda_host}>")
  list(TRANSFORM zt_sanitizers PREPEND "-fsanitize=" OUTPUT_VARIABLE zt_san_link)
  # GCC links ASan and UBSan as two shared runtimes, each with its own copy of the reporting
  # code; libasan's exported __sanitizer_set_report_path wins the symbol lookup, so UBSan's
  # reports ignore log_path and go to stderr, where a rank's report is lost in a test's captured
  # output. Linked statically into each program, each runtime keeps its own reporting path and
  # honours the log_path of its own options (ASAN_OPTIONS, UBSAN_OPTIONS): scripts/test_sanitizer.sh
  # relies on that to find the reports of child processes.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    if("address" IN_LIST zt_sanitizers)
      list(APPEND zt_san_link -static-libasan)
    endif()
    if("undefined" IN_LIST zt_sanitizers)
      list(APPEND zt_san_link -static-libubsan)
    endif()
  endif()
  add_link_options(${zt_san_link})
  message(STATUS "zero-teach: sanitizers ${ZT_SANITIZE}")
endif()
