# SPDX-License-Identifier: LGPL-2.1-or-later
# instance_lib.sh -- sourced by integration scripts that start a clf
# instance with `clf up`.
#
# instance_up CLF DATA LOG [clf up options...]
#   Start metad and the iods in DATA on a base port in 12000..20999
#   derived from the script's pid.  Another instance (a parallel test, a
#   user's) may hold those ports: on "address already in use" it tries
#   up to 5 bases.  `clf up`'s output goes to LOG; on failure LOG is
#   printed and 1 returned.  Sets $base.
instance_up() {
	_clf=$1 _data=$2 _log=$3
	shift 3
	_tries=0
	while :; do
		base=$((12000 + ($$ * 7 + _tries * 787) % 9000))
		if "$_clf" up --data "$_data" --base-port "$base" "$@" \
			>"$_log" 2>&1; then
			return 0
		fi
		"$_clf" down --data "$_data" >/dev/null 2>&1 || true
		rm -rf "$_data"
		_tries=$((_tries + 1))
		if ! grep -q "address already in use" "$_log" ||
			[ "$_tries" -ge 5 ]; then
			cat "$_log" >&2
			return 1
		fi
	done
}

# instance_kill DIR
#   Stop what is left of the instances in DIR when `clf down` could not:
#   each daemon named by a pid file anywhere under DIR whose command line still
#   names DIR (not a later process with the same pid), TERM, then KILL
#   after 5 s.
instance_kill() {
	_pids=
	for _f in $(find "$1" -name '*.pid' -type f 2>/dev/null); do
		_p=$(cat "$_f" 2>/dev/null) || continue
		case $_p in '' | *[!0-9]*) continue ;; esac
		tr '\0' ' ' <"/proc/$_p/cmdline" 2>/dev/null |
			grep -qF -- "$1/" || continue
		kill -TERM "$_p" 2>/dev/null && _pids="$_pids $_p"
	done
	for _i in 1 2 3 4 5 6 7 8 9 10; do
		_left=
		for _p in $_pids; do
			kill -0 "$_p" 2>/dev/null && _left="$_left $_p"
		done
		[ -z "$_left" ] && return 0
		sleep 0.5
	done
	for _p in $_left; do kill -KILL "$_p" 2>/dev/null; done
	return 0
}

# instance_stop DATA CLF
#   `clf down` of DATA, or (it failed, or was killed) instance_kill.
instance_stop() {
	[ -d "$1" ] || return 0
	timeout -k 5 60 "$2" down --data "$1" >/dev/null 2>&1 || true
	instance_kill "$1"
}

# instance_timed LIMIT SCRIPT ARGS...
#   At the top of a test: run it again (sh SCRIPT ARGS) under `timeout
#   -k 10 LIMIT`, this shell staying out of its process group, and exit
#   with its status.  At the limit timeout kills the whole group, the
#   test's EXIT trap too when it runs past -k, and the daemons `clf up`
#   detached would be left: this shell stops them afterwards (by their
#   pid files, instance_kill) under $CLF_TEST_TMP, where the test makes
#   its scratch directory.  In the test itself, returns at once.
instance_timed() {
	[ -z "${CLF_TEST_TMP:-}" ] || return 0
	_limit=$1
	shift
	CLF_TEST_TMP=$(mktemp -d "${TMPDIR:-/tmp}/clf-timed.XXXXXX")
	export CLF_TEST_TMP
	timeout -k 10 "$_limit" /bin/sh "$@" &
	_pid=$!
	trap 'kill -TERM "$_pid" 2>/dev/null' INT TERM HUP
	_rc=0
	wait "$_pid" || _rc=$?
	while kill -0 "$_pid" 2>/dev/null; do
		_rc=0
		wait "$_pid" || _rc=$?
	done
	trap - INT TERM HUP
	awk -v t="$CLF_TEST_TMP/" 'index($2, t) == 1 { print $2 }' /proc/mounts |
		while read -r _m; do umount -l "$_m" 2>/dev/null || true; done
	instance_kill "$CLF_TEST_TMP"
	rm -rf "$CLF_TEST_TMP"
	exit "$_rc"
}

# instance_test_begin NAME BUILD_DIR
#   The start of a test of one instance: SKIP (exit 77) while metad or
#   the iod is not built in BUILD_DIR; sets build (absolute), clf, tmp (a
#   new scratch directory named for NAME), data ($tmp/data) and conf;
#   at exit stops the instance in $data and removes $tmp, on a signal
#   exits 124.
instance_test_begin() {
	build=$2
	if [ ! -x "$build/metad/metad" ] || [ ! -x "$build/iod/iod" ]; then
		echo "SKIP: $build/metad/metad or $build/iod/iod not built yet"
		exit 77
	fi
	unset CLF_BIN_DIR CLF_CONFIG CLF_DATA_DIR CLF_BASE_PORT || true
	build=$(cd "$build" && pwd)
	clf=$build/tools/clf
	tmp=$(mktemp -d "${CLF_TEST_TMP:-${TMPDIR:-/tmp}}/clf-$1.XXXXXX")
	data=$tmp/data
	conf=$data/clf.conf
	trap instance_test_cleanup EXIT
	trap 'exit 124' INT TERM HUP
}

instance_test_cleanup() {
	rc=$?
	trap - EXIT INT TERM HUP
	# A mount the test left under $tmp (rm -rf would walk into it).
	awk -v t="$tmp/" 'index($2, t) == 1 { print $2 }' /proc/mounts |
		while read -r m; do umount -l "$m" 2>/dev/null || true; done
	instance_stop "$data" "$clf"
	rm -rf "$tmp"
	exit "$rc"
}
