# Small helpers so that each folder's CMakeLists reads as a list of what it builds.

# zt_module(NAME SOURCES ... DEPS ...): one src/ module as its own static library `zt_NAME`,
# so that a chapter links only the modules it has introduced. Headers are included as
# "NAME/file.h" from the src/ root.
function(zt_module name)
  cmake_parse_arguments(M "" "" "SOURCES;DEPS" ${ARGN})
  if(M_SOURCES)
    add_library(zt_${name} STATIC ${M_SOURCES})
    target_include_directories(zt_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
    target_link_libraries(zt_${name} PUBLIC ${M_DEPS})
  else()
    add_library(zt_${name} INTERFACE)
    target_include_directories(zt_${name} INTERFACE ${PROJECT_SOURCE_DIR}/src)
    target_link_libraries(zt_${name} INTERFACE ${M_DEPS})
  endif()
endfunction()

# zt_test_build_flags(TARGET): how test code is compiled. A test's own code (its cases, fixtures
# and the templates it instantiates) is compiled at -O1, whatever the build type asks of the
# library: at -O3 the test sources took half of a fresh build for no gain, since the seconds a test
# runs are spent in the library's code, which keeps the build type's flags. The bits cannot move:
# no optimisation level contracts a*b+c or reassociates a sum under -ffp-contract=off without
# fast-math. The sources of one test executable are compiled as one unity file, so the headers they
# share (Catch2, the fixtures, the engine's) are read once.
function(zt_test_build_flags target)
  if(NOT CMAKE_BUILD_TYPE STREQUAL "Debug")
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-O1>)
  endif()
  set_target_properties(${target} PROPERTIES UNITY_BUILD ON)
endfunction()

# zt_test(NAME SOURCES ... DEPS ... CHAPTERS 1 4 ... [LABELS l ...]): one Catch2 executable; every
# test case in it must carry a chapter tag [chN] for one of CHAPTERS. Each chapter's cases are
# registered with CTest under the label chN, so `ctest -L chN` (make test-chN) runs one chapter's
# tests; LABELS are added to all of them (`processes`: the cases start programs or forked
# children, which make test-stress repeats under load). A case tagged [full] as well is left to
# make test-full (label full): the full product of axes whose pairwise table make test runs.
function(zt_test name)
  cmake_parse_arguments(T "" "TIMEOUT" "SOURCES;DEPS;CHAPTERS;LABELS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_DEPS} Catch2::Catch2WithMain)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  # GCC 12 reports -Wrestrict false positives inside std::string assignment at -O2 (GCC bug
  # 105651); test code assigns strings freely, so the warning is silenced for tests only.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${name} PRIVATE -Wno-restrict)
  endif()
  zt_test_build_flags(${name})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  foreach(ch IN LISTS T_CHAPTERS)
    # Catch's discovery flattens PROPERTIES into one list, so a property with several values (the
    # labels chN and processes) would split into stray name/value pairs and lose the TIMEOUT after
    # it. The labels are therefore set by a file that CTest reads after the discovered tests: it
    # names them through the TEST_LIST variable that the discovery script defines.
    set(list_var "${name}_ch${ch}_tests")
    catch_discover_tests(${name} TEST_SPEC "[ch${ch}]~[full]" TEST_PREFIX "ch${ch}: "
      TEST_LIST ${list_var} PROPERTIES TIMEOUT ${T_TIMEOUT}
      WORKING_DIRECTORY ${PROJECT_BINARY_DIR})
    set(labels_file "${CMAKE_CURRENT_BINARY_DIR}/${list_var}_labels.cmake")
    file(WRITE "${labels_file}"
      "if(${list_var})\n"
      "  set_tests_properties(\${${list_var}} PROPERTIES LABELS \"ch${ch};${T_LABELS}\")\n"
      "endif()\n")
    set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${labels_file}")
  endforeach()
  # A case tagged [full] is a larger twin of a chapter's case (a full product beside its pairwise
  # table): label `full`, so make test (ctest -LE full) leaves it to make test-full.
  catch_discover_tests(${name} TEST_SPEC "[full]" TEST_PREFIX "full: "
    PROPERTIES LABELS full TIMEOUT 7200 WORKING_DIRECTORY ${PROJECT_BINARY_DIR})
endfunction()

# zt_add_subfolders(): add every sub-folder of the current folder that has a CMakeLists.txt, in
# name order. Each one names its own dependencies, so adding a module, chapter, test group, app or
# benchmark needs no edit in its parent. CONFIGURE_DEPENDS re-globs on every build.
function(zt_add_subfolders)
  file(GLOB children LIST_DIRECTORIES true CONFIGURE_DEPENDS RELATIVE ${CMAKE_CURRENT_SOURCE_DIR}
       ${CMAKE_CURRENT_SOURCE_DIR}/*)
  list(SORT children)
  foreach(child IN LISTS children)
    if(IS_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/${child} AND EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/${child}/CMakeLists.txt)
      add_subdirectory(${child})
    endif()
  endforeach()
endfunction()
