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
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/clf-$1.XXXXXX")
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
	"$clf" down --data "$data" >/dev/null 2>&1 || true
	rm -rf "$tmp"
	exit "$rc"
}
