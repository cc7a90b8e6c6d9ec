# SPDX-License-Identifier: LGPL-2.1-or-later
# suite_lib.sh -- sourced by the external suites' runners
# (test_hdf5_suite.sh, test_pnetcdf_suite.sh): an instance of their own
# and a mount of it, removed on exit.
#
# suite_up NAME: needs $clf and $mountclf; sets $tmp, $data, $mnt and an
# EXIT trap that unmounts, stops the instance and removes $tmp.

mounted() {
	awk -v m="$1" '$2 == m { f = 1 } END { exit !f }' /proc/mounts
}

suite_cleanup() {
	rc=$?
	trap - EXIT INT TERM HUP
	if mounted "$mnt"; then
		umount -l "$mnt" 2>/dev/null || true
	fi
	if [ -f "$data/clf.conf" ] &&
		! "$clf" down --data "$data" >"$tmp/down" 2>&1; then
		echo "cleanup: clf down failed:" >&2
		cat "$tmp/down" >&2
	fi
	rm -rf "$tmp"
	exit "$rc"
}

suite_up() {
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/clf-$1-suite.XXXXXX")
	data=$tmp/data
	mnt=$tmp/mnt
	mkdir "$mnt"
	trap suite_cleanup EXIT
	trap 'exit 124' INT TERM HUP
	instance_up "$clf" "$data" "$tmp/up" ||
		{ echo "FAIL: clf up" >&2; exit 1; }
	# cache=none: no name or attribute cached by the kernel, as the
	# programs create and delete names through MPI-IO and check them
	# through POSIX at once (PnetCDF's NC_NOCLOBBER test sees a name
	# deleted by MPI-IO for the 1 s the default cache keeps it; NFS has
	# noac for the same reason).
	if ! "$mountclf" "$data/clf.conf" "$mnt" \
		-o "cache=none,log=$tmp/mnt.log" >"$tmp/out" 2>&1 ||
		! mounted "$mnt"; then
		echo "FAIL: mount.clf:" >&2
		cat "$tmp/out" "$tmp/mnt.log" >&2 2>/dev/null
		exit 1
	fi
}
