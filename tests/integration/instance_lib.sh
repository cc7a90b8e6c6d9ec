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
