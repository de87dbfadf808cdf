# How the project's ctest tests are declared. Included by the top-level
# CMakeLists.txt and by runtime/CMakeLists.txt when the runtime is configured
# on its own (the sanitizer builds).
#
# Labels: every test has the label of its suite (lit, gtest, pytest, st,
# golden, e2e, sanitize, fuzz, mpi, package, lint, cuda). The label `quick`
# marks the subset a developer runs while working (`scripts/test.sh -L
# quick`, a few minutes on a built tree): every lit, golden and lint test,
# the GoogleTest suites, and one system-test file per area. CI runs all.
include_guard(GLOBAL)
include(GoogleTest)

# gtest_discover_tests with several labels. Its PROPERTIES cannot carry a
# list: the discovered tests are written to a file with the list's items as
# separate arguments. So the labels are set by a second file that ctest
# includes after the discovered tests, over the names they left in
# <target>_TESTS.
#   blockpipe_discover_gtests(TARGET LABELS l1 [l2...] [TEST_SUFFIX s]
#                             [PROPERTIES name value...])
function(blockpipe_discover_gtests target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "TEST_SUFFIX" "LABELS;PROPERTIES")
  set(suffix "")
  if(arg_TEST_SUFFIX)
    set(suffix TEST_SUFFIX ${arg_TEST_SUFFIX})
  endif()
  set(properties "")
  if(arg_PROPERTIES)
    set(properties PROPERTIES ${arg_PROPERTIES})
  endif()
  gtest_discover_tests(${target} TEST_LIST ${target}_TESTS
    DISCOVERY_TIMEOUT 60 ${suffix} ${properties})
  set(script ${CMAKE_CURRENT_BINARY_DIR}/${target}_labels.cmake)
  file(WRITE ${script}
    "foreach(test IN LISTS ${target}_TESTS)\n"
    "  set_tests_properties(\"\${test}\" PROPERTIES LABELS \"${arg_LABELS}\")\n"
    "endforeach()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${script})
endfunction()
