#!/bin/sh
# Run a command (make check-... in a ThreadSanitizer build) so that no
# race report passes silently: every instrumented process -- the tests,
# and the daemons and clients they start, which inherit TSAN_OPTIONS --
# writes its reports to a file in one fresh directory, and the run fails
# when that directory holds any report, whatever the exit statuses said.
# A daemon's report may come after its test has passed, or from a daemon
# the harness then kills; the directory catches both.
#
#   scripts/tsan-check.sh make O=build-tsan CONFIG_CLF_TSAN=y check-unit
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
dir=$(mktemp -d "${TMPDIR:-/tmp}/clf-tsan.XXXXXX") || exit 1

# halt_on_error: the racing process stops at its first report (its exit
# status 66 fails the test as well); second_deadlock_stack: both stacks
# of a lock-order inversion.
TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1"
TSAN_OPTIONS="$TSAN_OPTIONS suppressions=$root/scripts/tsan.supp"
TSAN_OPTIONS="$TSAN_OPTIONS log_path=$dir/report ${TSAN_EXTRA_OPTIONS:-}"
export TSAN_OPTIONS

"$@"
rc=$?

reports=$(find "$dir" -type f -name 'report*' | sort)
if [ -n "$reports" ]; then
	for r in $reports; do
		echo "== ThreadSanitizer: $r"
		cat "$r"
	done
	echo "ThreadSanitizer: $(echo "$reports" | wc -l) process(es) reported"
	[ "$rc" -ne 0 ] || rc=1
else
	rm -rf "$dir"
fi
exit "$rc"
