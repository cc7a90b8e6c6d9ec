#!/bin/sh
# The namespace suites of the native API (test_native's namespace tests,
# test_native_links) against a namespace spread over 3 metads on
# loopback, then what only several metads have (test_native_metads):
# renames and links across metads, a metad killed in the middle of a
# rename across.
B=${CLF_BUILD_DIR:-build}
export CLF_TEST_METADS=3
for t in test_native test_native_links test_native_metads; do
	"$B/tests/integration/$t"
	rc=$?
	[ $rc -eq 0 ] || exit $rc
done
exit 0
