#!/bin/sh
# Run test programs one after the other and print one summary line.
# A program exiting 77 was skipped (a facility is absent); any other
# non-zero exit is a failure.  Exits non-zero when anything failed.

# MPICH's UCX netmod lists every network interface in MPI_Init, and
# `make -j2 check` runs the namespace tests (veth pairs made and removed)
# beside the MPI suites: an interface gone mid-listing failed MPI_Init
# with "init_worker No such device".  Every test's MPI job is on this
# host, where shared memory and loopback are all it uses.
UCX_NET_DEVICES=${UCX_NET_DEVICES:-lo}
export UCX_NET_DEVICES
passed=0
failed=0
skipped=0
for t in "$@"; do
	echo "== $t"
	start=$(date +%s)
	"$t"
	rc=$?
	# CI has a wall-clock limit: each test's time shows where it goes.
	echo "   ($(( $(date +%s) - start )) s: $t)"
	case $rc in
	0) passed=$((passed + 1)) ;;
	77) skipped=$((skipped + 1)); echo "   (skipped)" ;;
	*) failed=$((failed + 1)); echo "   FAILED (exit $rc)" ;;
	esac
done
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
