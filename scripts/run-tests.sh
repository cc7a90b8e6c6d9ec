#!/bin/sh
# Run test programs one after the other and print one summary line.
# A program exiting 77 was skipped (a facility is absent); any other
# non-zero exit is a failure.  Exits non-zero when anything failed.
passed=0
failed=0
skipped=0
for t in "$@"; do
	echo "== $t"
	"$t"
	rc=$?
	case $rc in
	0) passed=$((passed + 1)) ;;
	77) skipped=$((skipped + 1)); echo "   (skipped)" ;;
	*) failed=$((failed + 1)); echo "   FAILED (exit $rc)" ;;
	esac
done
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
