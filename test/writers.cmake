# Profile writer tests (test/unit/test_writers.c); include()d from
# test/CMakeLists.txt after hp_unit_test() is defined.
#
# The test checks the pprof output with the real `go tool pprof`, so it
# needs Go: /usr/local/go/bin/go or `go` in PATH at run time (HP_GO
# overrides both). The first run compiles the pprof tool into Go's build
# cache, which takes a minute or two: hence the longer timeout.
# python3 (HTML structure) and node (HTML script smoke test) are used when
# present and reported when not.
hp_unit_test(test_writers)
set_tests_properties(test_writers PROPERTIES TIMEOUT 900)
