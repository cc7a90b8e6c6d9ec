#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# test_caps.sh -- capabilities at the iods (clf_proto.h, "Capabilities"):
# a user cannot skip metad by talking to an iod.
#
#   - munged is started when it is not running (munge_lib.sh); user
#     clfperm1 (test_perm.sh's) is created when missing;
#   - an instance with auth = munge, one iod, capability_lifetime = 3;
#   - root makes /root-file (0644, root's) and /mine (0644, clfperm1's);
#   - as clfperm1, cap_client writes to the iod of /root-file's data
#     with no capability, a forged one (read turned into write), and
#     /mine's: each refused with EACCES, the iod keeps serving, and
#     /root-file holds no byte of it; a capability of /mine kept past
#     its lifetime: EKEYEXPIRED; an honest write with /mine's: OK;
#   - root's process holds an extent lock on /root-file; clfperm1, told
#     its client id and lock id, cannot release it, bind a connection to
#     that client or take its callback connection (EACCES), and root's
#     own release then finds its lock;
#   - a process of clfperm1 writes /mine, root removes write
#     (chmod 444), and a write 4 s later (past the lifetime) is refused.
# Must run as root (it adds a user and starts daemons for it).
set -u

build=${1:-${CLF_BUILD_DIR:-build}}
here=$(dirname "$0")
clf=$build/tools/clf
cc=$build/tests/integration/caps/cap_client
. "$here/munge_lib.sh"

if [ "$(id -u)" -ne 0 ]; then
	echo "FAIL: test_caps.sh adds a user: run it as root" >&2
	exit 1
fi
for p in "$clf" "$cc" "$build/metad/metad" "$build/iod/iod"; do
	[ -x "$p" ] || { echo "FAIL: $p not built" >&2; exit 1; }
done
munge_ensure || exit 1
unset CLF_BIN_DIR CLF_CONFIG CLF_DATA_DIR CLF_BASE_PORT LD_PRELOAD || true
id clfperm1 >/dev/null 2>&1 ||
	useradd -M -U -s /usr/sbin/nologin clfperm1 || exit 1

tmp=$(mktemp -d "${TMPDIR:-/tmp}/clf-caps-test.XXXXXX")
chmod 755 "$tmp"
conf=$tmp/clf.conf

cleanup() {
	rc=$?
	trap - EXIT INT TERM HUP
	[ -f "$conf" ] && "$clf" -c "$conf" down >/dev/null 2>&1
	[ "$rc" -ne 0 ] && [ -f "$tmp/data/iod0/iod.log" ] &&
		tail -20 "$tmp/data/iod0/iod.log" >&2
	rm -rf "$tmp"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 124' INT TERM HUP

head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$tmp/secret"
chmod 600 "$tmp/secret"
tries=0
while :; do
	base=$((21000 + ($$ * 17 + tries * 787) % 9000))
	cat >"$conf" <<CONF
[global]
secret_file = $tmp/secret
auth = munge
capability_lifetime = 3
data_dir = $tmp/data
metad = 127.0.0.1:$base
iod = 127.0.0.1:$((base + 1))
CONF
	chmod 644 "$conf"
	"$clf" -c "$conf" up >"$tmp/up" 2>&1 && break
	"$clf" -c "$conf" down >/dev/null 2>&1
	tries=$((tries + 1))
	if ! grep -q "address already in use" "$tmp/up" || [ "$tries" -ge 5 ]; then
		echo "FAIL: clf up:" >&2
		cat "$tmp/up" >&2
		exit 1
	fi
done

passed=0
failed=0
as_user() {
	setpriv --reuid=clfperm1 --regid=clfperm1 --init-groups \
		env CLF_CONFIG="$conf" "$@"
}
# expect WANT LINE: LINE matches the glob WANT*.
expect() {
	case $2 in
	$1*) passed=$((passed + 1)) ;;
	*)
		failed=$((failed + 1))
		echo "FAIL: got '$2', want '$1'" >&2
		;;
	esac
}
step() { # step NAME OUTPUT: the line of step NAME in OUTPUT
	printf '%s\n' "$2" | grep "^$1: " | head -1
}

printf 'ROOTDATA' >"$tmp/rootdata"
chmod 644 "$tmp/rootdata"
"$clf" -c "$conf" cp "$tmp/rootdata" clf:/root-file >/dev/null || exit 1
# /u/mine belongs to clfperm1: it makes it.
expect "mkdir: OK" "$(CLF_CONFIG=$conf "$cc" mkdir /u 0777)"
as_user "$clf" cp "$tmp/rootdata" clf:/u/mine >/dev/null 2>"$tmp/err" || {
	echo "FAIL: clfperm1 cannot create a file:" >&2
	cat "$tmp/err" >&2
	exit 1
}
mine=/u/mine

out=$(as_user "$cc" nocap /root-file)
expect "write: ERR EACCES" "$(step write "$out")"
expect "lock: ERR EACCES" "$(step lock "$out")"
expect "ping: OK" "$(as_user "$cc" ping)"

out=$(as_user "$cc" forged /root-file)
expect "cap: ERR EACCES*forged" "$(step cap "$out")"
expect "write: ERR EACCES" "$(step write "$out")"

out=$(as_user "$cc" other "$mine" /root-file)
expect "cap: OK" "$(step cap "$out")"
expect "write: ERR EACCES" "$(step write "$out")"
expect "ping: OK" "$(as_user "$cc" ping)"

out=$(as_user "$cc" expired "$mine" 4)
expect "write: ERR EKEYEXPIRED" "$(step write "$out")"
# The second hand-over of the same, now expired, capability.
expect "cap: ERR EKEYEXPIRED" "$(printf '%s\n' "$out" | grep '^cap: ' | tail -1)"

# Nothing of it reached root's file.
"$clf" -c "$conf" cp clf:/root-file "$tmp/back" >/dev/null || exit 1
expect "ROOTDATA" "$(cat "$tmp/back")"

# The honest way works (so the refusals above are the capabilities').
out=$(as_user "$cc" honest "$mine")
expect "write: OK" "$(step write "$out")"

# Another user's extent lock (LOCK_RELEASE, LOCK_CALLBACK name a client
# id, no file): a user who learnt the client id and the lock's cannot
# release it, bind a connection to that client, or take its callback.
CLF_CONFIG=$conf "$cc" holder /root-file 6 >"$tmp/holder" 2>&1 &
pid=$!
n=0
while ! grep -q '^locked: ' "$tmp/holder" 2>/dev/null && [ "$n" -lt 50 ]; do
	sleep 0.1
	n=$((n + 1))
done
# shellcheck disable=SC2046 # CLIENT ID, two words
out=$(as_user "$cc" steal $(sed -n 's/^locked: //p' "$tmp/holder"))
expect "release: ERR EACCES*uid" "$(step release "$out")"
expect "bind: ERR EACCES" "$(step bind "$out")"
expect "callback: ERR EACCES" "$(step callback "$out")"
wait "$pid"
out=$(cat "$tmp/holder")
expect "callback: OK" "$(step callback "$out")"
expect "locked: " "$(step locked "$out")"
expect "release: OK" "$(step release "$out")"

# chmod that removes write: refused once the capability expired.
as_user "$cc" rewrite "$mine" 5 >"$tmp/rewrite" 2>&1 &
pid=$!
n=0
while ! grep -q waiting "$tmp/rewrite" && [ "$n" -lt 50 ]; do
	sleep 0.1
	n=$((n + 1))
done
expect "chmod: OK" "$(CLF_CONFIG=$conf "$cc" chmod "$mine" 0444)"
wait "$pid"
out=$(cat "$tmp/rewrite")
expect "write1: OK" "$(step write1 "$out")"
expect "write2: ERR EACCES" "$(step write2 "$out")"

grep -q "no capability" "$tmp/data/iod0/iod.log" ||
	{ failed=$((failed + 1)); echo "FAIL: the iod did not log a refusal" >&2; }

echo "test_caps: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
