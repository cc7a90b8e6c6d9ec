# SPDX-License-Identifier: LGPL-2.1-or-later
# munge_lib.sh -- sourced by the tests that need MUNGE (test_perm.sh).
#
# munge_ensure: make sure munged answers on its default socket, as on a
# cluster node.  When it does not, start one (with the key the Debian
# package made, or a new test key): as user munge, else as root with
# --force (a container whose /dev/null the munge user cannot open).
# Never skips: a test that needs munged fails without it.
munge_works() {
	munge -n 2>/dev/null | unmunge >/dev/null 2>&1
}

munge_ensure() {
	munge_works && return 0
	if ! command -v munged >/dev/null 2>&1 &&
		[ ! -x /usr/sbin/munged ]; then
		echo "FAIL: no munged: scripts/install-deps.sh installs munge" >&2
		return 1
	fi
	if [ "$(id -u)" -ne 0 ]; then
		echo "FAIL: munged is not running, and only root may start it" >&2
		return 1
	fi
	key=/etc/munge/munge.key
	mkdir -p /etc/munge /run/munge /var/lib/munge /var/log/munge
	if [ ! -s "$key" ]; then
		echo "munge_ensure: making a test key $key"
		mungekey --create --keyfile="$key" 2>/dev/null ||
			dd if=/dev/urandom of="$key" bs=1024 count=1 2>/dev/null
		chown munge:munge "$key" 2>/dev/null || true
		chmod 600 "$key"
	fi
	chown munge:munge /run/munge /var/lib/munge /var/log/munge \
		2>/dev/null || true
	runuser -u munge -- /usr/sbin/munged >/dev/null 2>&1 ||
		/usr/sbin/munged --force >/dev/null 2>&1 || true
	for _i in $(seq 50); do
		munge_works && return 0
		sleep 0.1
	done
	echo "FAIL: munged does not answer after starting it" >&2
	return 1
}
