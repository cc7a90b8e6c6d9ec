# SPDX-License-Identifier: LGPL-2.1-or-later
# cli_lib.sh -- helpers the clf command-line tests share (sourced).
# The test sets $tmp (its directory) and $step (what it is doing).

fail() {
	echo "FAIL: $step: $*" >&2
	echo "--- stdout" >&2
	cat "$tmp/out" >&2 2>/dev/null || true
	echo "--- stderr" >&2
	cat "$tmp/err" >&2 2>/dev/null || true
	exit 1
}

# run CMD...: its exit status in $rc, its output in $tmp/out and $tmp/err.
# Under ASan/UBSan (O=build-asan) a report fails the test whatever the
# exit status: a leak on an error path exits 1 like the error itself.
run() {
	set +e
	"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	set -e
	if grep -q 'Sanitizer\|runtime error:' "$tmp/err"; then
		fail "a sanitizer report"
	fi
}
