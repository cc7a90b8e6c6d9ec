# SPDX-License-Identifier: LGPL-2.1-or-later
# netns_lib.sh -- sourced by the tests that put an instance or its
# clients in network namespaces (test_forward.sh, test_remote_names.sh,
# test_multihost.sh).  The test defines fail MESSAGE.

# netns_find_build [BUILD_DIR]: build (absolute), clf, client
# (remote_client) and xfer (romio_xfer, which may be missing).  SKIP
# (exit 77) without a build directory; FAIL when a program is missing.
netns_find_build() {
	local b
	build=${1:-${CLF_BUILD_DIR:-build}}
	if ! build=$(cd "$build" 2>/dev/null && pwd); then
		echo "SKIP: no build directory ${1:-${CLF_BUILD_DIR:-build}}"
		exit 77
	fi
	clf=$build/tools/clf
	client=$build/tests/integration/remote_client
	xfer=$build/tests/integration/romio/romio_xfer
	for b in "$build/metad/metad" "$build/iod/iod" "$clf" "$client"; do
		if [ ! -x "$b" ]; then
			echo "FAIL: $b not built" >&2
			exit 1
		fi
	done
}

# netns_add_first NAME: the test's first namespace.  SKIP (exit 77)
# where there is no ip command or making a namespace is not permitted.
netns_add_first() {
	local why
	if ! command -v ip >/dev/null; then
		echo "SKIP: no ip command (iproute2)"
		exit 77
	fi
	if ! why=$(ip netns add "$1" 2>&1); then
		case $why in
		*"not permitted"* | *"ermission denied"*)
			echo "SKIP: ip netns add is not permitted here: $why"
			exit 77 ;;
		esac
		fail "ip netns add $1: $why"
	fi
}

# netns_instance_up NS ADDR PORT DIR [KEY = VALUE]...: an instance in
# namespace NS, metad on ADDR:PORT and two iods on the next ports, its
# configuration (with the global KEY = VALUE lines) and a new secret in
# DIR; `clf up`'s output in $tmp/out.
netns_instance_up() {
	local ns=$1 addr=$2 port=$3 dir=$4 l
	shift 4
	{
		echo "[global]"
		echo "secret_file = $dir/secret"
		echo "auth = secret"
		for l in "$@"; do
			echo "$l"
		done
		echo "metad = $addr:$port:$dir/meta"
		echo "iod = $addr:$((port + 1)):$dir/iod0"
		echo "iod = $addr:$((port + 2)):$dir/iod1"
	} >"$dir/clf.conf"
	od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$dir/secret"
	chmod 600 "$dir/clf.conf" "$dir/secret"
	ip netns exec "$ns" "$clf" up -c "$dir/clf.conf" >"$tmp/out" 2>&1 ||
		fail "clf up"
}

# netns_remote_user SECRET DIR SYSCONFDIR: the client side as a remote
# user is given it, a copy of SECRET in DIR and nothing else
# (CLF_TEST_SYSCONFDIR hides /etc/clf); cd DIR.
netns_remote_user() {
	cp "$1" "$2/secret"
	chmod 600 "$2/secret"
	export CLF_SECRET_FILE=$2/secret CLF_TEST_SYSCONFDIR=$3
	cd "$2"
}
