#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# test_perm.sh -- many users on one clf: MUNGE credentials and the POSIX
# permissions metad enforces, against real daemons, real munged and real
# users.
#
#   - munged is started when it is not running (munge_lib.sh); users
#     clfperm1 and clfperm2 and their shared group clfpermg are created
#     (useradd) when missing, and kept for the next run;
#   - an instance with auth = munge: clf.conf readable by all, the secret
#     in a secret_file only root may read, so the users' processes
#     authenticate with MUNGE and root's with the secret;
#   - root lays out a tree; then a table of operations, each run as one
#     user (setpriv) through the native API (perm_client), and as many
#     through `clf` and MPI-IO (perm_mpi, under mpiexec), with the result
#     each must have: OK, or the errno (MPI error class);
#   - forged, expired, unbound and replayed MUNGE credentials, and one of
#     another user replayed on another connection, are refused, and the
#     daemons keep serving;
#   - a user without the secret is refused by an instance with
#     auth = secret.
# Must run as root (it adds users and starts daemons for them).
set -u

build=${1:-${CLF_BUILD_DIR:-build}}
here=$(dirname "$0")
clf=$build/tools/clf
pc=$build/tests/integration/perm/perm_client
pm=$build/tests/integration/perm/perm_mpi
. "$here/munge_lib.sh"

if [ "$(id -u)" -ne 0 ]; then
	echo "FAIL: test_perm.sh adds users: run it as root" >&2
	exit 1
fi
for p in "$clf" "$pc" "$build/metad/metad" "$build/iod/iod"; do
	[ -x "$p" ] || { echo "FAIL: $p not built" >&2; exit 1; }
done
munge_ensure || exit 1
unset CLF_BIN_DIR CLF_CONFIG CLF_DATA_DIR CLF_BASE_PORT LD_PRELOAD \
	CLF_TEST_MUNGE_CRED CLF_TEST_MUNGE_SAVE || true

# Users: two, each with its own group, both in clfpermg.
getent group clfpermg >/dev/null || groupadd clfpermg || exit 1
for u in clfperm1 clfperm2; do
	id "$u" >/dev/null 2>&1 ||
		useradd -M -U -G clfpermg -s /usr/sbin/nologin "$u" || exit 1
	# test_caps.sh makes clfperm1 without clfpermg when it runs first
	# (make -j2 on a fresh machine): the membership is ours to ensure.
	id -nG "$u" | tr ' ' '\n' | grep -qx clfpermg ||
		usermod -a -G clfpermg "$u" || exit 1
done
uid1=$(id -u clfperm1) gid1=$(id -g clfperm1)
uid2=$(id -u clfperm2)
gidg=$(getent group clfpermg | cut -d: -f3)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/clf-perm-test.XXXXXX")
chmod 755 "$tmp"
conf=$tmp/clf.conf

cleanup() {
	rc=$?
	trap - EXIT INT TERM HUP
	for c in "$conf" "$tmp/secret-only.conf"; do
		[ -f "$c" ] && "$clf" -c "$c" down >/dev/null 2>&1
	done
	[ "$rc" -ne 0 ] && [ -f "$tmp/data/meta/metad.log" ] &&
		tail -20 "$tmp/data/meta/metad.log" >&2
	rm -rf "$tmp"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 124' INT TERM HUP

head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$tmp/secret"
chmod 600 "$tmp/secret"

# conf_write FILE AUTH BASE [LINE]: a 2-iod instance under $tmp/data.
conf_write() {
	cat >"$1" <<EOF
[global]
secret_file = $tmp/secret
auth = $2
${4:-}
data_dir = $tmp/data${2#munge}
metad = 127.0.0.1:$3
iod = 127.0.0.1:$(($3 + 1))
iod = 127.0.0.1:$(($3 + 2))
EOF
	chmod 644 "$1"
}

# up CONF AUTH [LINE]: start it on a free base port (another test may
# hold one).
up() {
	tries=0
	while :; do
		base=$((21000 + ($$ * 13 + tries * 787) % 9000))
		conf_write "$1" "$2" "$base" "${3:-}"
		# Long enough for a credential to expire in a handshake.
		CLF_TEST_METAD_HANDSHAKE_MS=5000 "$clf" -c "$1" up \
			>"$tmp/up" 2>&1 && return 0
		"$clf" -c "$1" down >/dev/null 2>&1
		tries=$((tries + 1))
		if ! grep -q "address already in use" "$tmp/up" ||
			[ "$tries" -ge 5 ]; then
			echo "FAIL: clf up:" >&2
			cat "$tmp/up" >&2
			exit 1
		fi
	done
}

up "$conf" munge
grep -q '^authentication: munge' "$tmp/up" ||
	{ echo "FAIL: clf up does not say auth munge:" >&2; cat "$tmp/up" >&2; exit 1; }

passed=0
failed=0

# as USER CMD...: run CMD as USER (root: as is) with the instance's config.
as() {
	u=$1
	shift
	if [ "$u" = root ]; then
		env CLF_CONFIG="$conf" "$@"
	else
		setpriv --reuid="$u" --regid="$u" --init-groups \
			env CLF_CONFIG="$conf" "$@"
	fi
}

# expect USER WANT CMD...: CMD's first output line matches the glob
# WANT* ("OK", "ERR EACCES", "ERR EACCES*why", ...).
expect() {
	u=$1 want=$2
	shift 2
	got=$(as "$u" "$@" 2>&1 </dev/null | head -1)
	# shellcheck disable=SC2254
	case $got in
	$want*) passed=$((passed + 1)) ;;
	*)
		failed=$((failed + 1))
		echo "FAIL: as $u: $* -> '$got', want '$want'" >&2
		;;
	esac
}

# The tree, made by root (the secret: it may act for anyone).
setup() {
	out=$(as root "$pc" "$@" 2>&1)
	[ "$out" = OK ] || { echo "FAIL: setup $*: $out" >&2; exit 1; }
}
setup mkdir /pub 0777
setup chmod /pub 0777
setup mkdir /pub/sticky 0777
setup chmod /pub/sticky 1777
setup mkdir /home1 0755
setup chown /home1 "$uid1" "$gid1"
setup mkdir /priv 0700
setup chown /priv "$uid1" "$gid1"
setup mkdir /shared 0770
setup chown /shared 0 "$gidg"
setup chmod /shared 2770
setup create /f644 0644
setup write /f644 root-data
for f in own:0600 grp:0640 grpw:0660 empty:0644 sg:0644 closed:0600; do
	setup create "/home1/${f%:*}" "${f#*:}"
	setup chown "/home1/${f%:*}" "$uid1" "$gidg"
done
setup chown /home1/own "$uid1" "$gid1"
setup chown /home1/sg "$uid1" 0
setup write /home1/grp group-data
setup create /priv/secret 0644
setup chown /priv/secret "$uid1" "$gid1"
setup create /pub/sticky/u1file 0666
setup chown /pub/sticky/u1file "$uid1" "$gid1"

u1=clfperm1
u2=clfperm2

echo "-- native API (perm_client)"
# Read, write and search bits of owner, group (supplementary) and other.
expect $u2 OK "$pc" read /f644
expect $u2 "ERR EACCES" "$pc" write /f644 x
expect $u2 "ERR EACCES" "$pc" create /x 0644
expect $u2 "ERR EACCES" "$pc" mkdir /x 0755
expect $u1 OK "$pc" create /home1/new 0644
expect $u2 "ERR EACCES*create 'new2'*directory 'home1'" \
	"$pc" create /home1/new2 0644
expect $u1 OK "$pc" read /home1/own
expect $u1 OK "$pc" write /home1/own mine
expect $u2 "ERR EACCES" "$pc" read /home1/own
expect $u2 OK "$pc" read /home1/grp
expect $u2 "ERR EACCES" "$pc" write /home1/grp x
expect $u2 OK "$pc" write /home1/grpw shared
expect $u2 "ERR EACCES*cannot search 'priv'" "$pc" stat /priv/secret
expect $u2 "ERR EACCES" "$pc" read /priv/secret
expect $u2 "ERR EACCES" "$pc" ls /priv
expect $u1 OK "$pc" ls /priv
expect $u1 OK "$pc" read /priv/secret
expect $u2 "ERR EACCES" "$pc" unlink /home1/grpw
expect $u2 "ERR EACCES" "$pc" rmdir /priv
# The sticky directory: others' entries stay.
expect $u2 "ERR EPERM" "$pc" unlink /pub/sticky/u1file
expect $u2 "ERR EPERM" "$pc" rename /pub/sticky/u1file /pub/stolen
expect $u2 OK "$pc" create /pub/sticky/u2file 0644
expect $u2 OK "$pc" unlink /pub/sticky/u2file
# Rename across directories needs write on both.
expect $u2 OK "$pc" create /pub/u2file 0644
expect $u2 "ERR EACCES" "$pc" rename /pub/u2file /home1/moved
expect $u2 "ERR EACCES" "$pc" rename /home1/grpw /pub/moved
expect $u1 OK "$pc" rename /pub/u2file /home1/moved
# chmod, chown, times: the owner (or root) only.
expect $u2 "ERR EPERM" "$pc" chmod /home1/grpw 0777
expect $u1 OK "$pc" chmod /home1/own 0640
expect $u2 "ERR EPERM" "$pc" chown /home1/grp "$uid2" "$gidg"
expect $u1 "ERR EPERM" "$pc" chown /home1/own "$uid2" "$gid1"
expect $u1 OK "$pc" chown /home1/own "$uid1" "$gidg"
expect $u1 "ERR EPERM" "$pc" chown /home1/own "$uid1" 0
expect $u1 OK "$pc" chmod /home1/sg 2755
expect $u1 "$uid1 0 0755" "$pc" owner /home1/sg
expect $u2 "ERR EPERM" "$pc" utime /home1/grpw
expect $u2 OK "$pc" touch /home1/grpw
expect $u2 "ERR EACCES" "$pc" touch /home1/grp
expect $u1 OK "$pc" utime /home1/grp
expect $u2 "ERR EACCES" "$pc" truncate /home1/grp 0
expect $u2 OK "$pc" truncate /home1/grpw 0
# Locks need the right they lock for.
expect $u2 OK "$pc" lock-r /home1/grp
expect $u2 "ERR EACCES" "$pc" lock-w /home1/grp
expect $u2 OK "$pc" lock-w /home1/grpw
expect $u2 "ERR EACCES" "$pc" lock-r /home1/closed
# New inodes: the user's, or a setgid directory's group.
expect $u2 OK "$pc" mkdir /shared/d2 0755
expect $u2 "$uid2 $gidg 2755" "$pc" owner /shared/d2
expect $u2 OK "$pc" create /pub/u2new 0640
expect $u2 "$uid2 $(id -g clfperm2) 0640" "$pc" owner /pub/u2new

# Symbolic and hard links: write on the directory they go in.
expect $u2 "ERR EACCES" "$pc" symlink /home1/ln /f644
expect $u2 OK "$pc" symlink /pub/ln /f644
expect $u2 "$uid2 " "$pc" owner /pub/ln
expect $u2 "ERR EACCES" "$pc" link /pub/u2new /home1/hard
expect $u2 OK "$pc" link /pub/u2new /pub/hard

echo "-- clf command line"
# expect_rc USER RC [MSG] -- CMD...: CMD exits RC and says MSG (a grep -E
# pattern) on standard error.  The output goes to a file root opens.
expect_rc() {
	u=$1 want=$2 msg=
	shift 2
	[ "$1" != -- ] && { msg=$1; shift; }
	shift
	as "$u" "$@" >"$tmp/cli.out" 2>&1 </dev/null
	rc=$?
	if [ "$rc" -eq "$want" ] &&
		{ [ -z "$msg" ] || grep -Eq "$msg" "$tmp/cli.out"; }; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		echo "FAIL: as $u: $* -> exit $rc, want $want ${msg:+and '$msg'}:" >&2
		cat "$tmp/cli.out" >&2
	fi
}
echo data >"$tmp/local"
chmod 644 "$tmp/local"
expect_rc $u2 0 -- "$clf" ls /home1
expect_rc $u2 1 "permission denied" -- "$clf" ls /priv
expect_rc $u2 1 "permission denied" -- "$clf" cp -q "$tmp/local" clf:/home1/cp
expect_rc $u2 0 -- "$clf" cp -q "$tmp/local" clf:/pub/cp
expect_rc $u2 0 -- "$clf" mkdir /pub/u2dir
expect_rc $u2 1 "permission denied" -- "$clf" mkdir /home1/u2dir
# setlayout: the owner only.
expect_rc $u2 1 "not permitted" -- "$clf" setlayout --stripe-count 1 /home1/empty
expect_rc $u1 0 -- "$clf" setlayout --stripe-count 1 /home1/empty

echo "-- MPI-IO (clf:)"
if [ -x "$pm" ]; then
	expect $u2 OK mpiexec -n 2 "$pm" read clf:/home1/grp
	expect $u2 "ERR MPI_ERR_ACCESS" mpiexec -n 2 "$pm" write clf:/home1/grp
	expect $u2 "ERR MPI_ERR_ACCESS" mpiexec -n 2 "$pm" create clf:/home1/mpi
	expect $u2 OK mpiexec -n 2 "$pm" create clf:/pub/mpi
	expect $u1 "ERR MPI_ERR_ACCESS" mpiexec -n 2 "$pm" write clf:/pub/mpi
	expect $u2 OK mpiexec -n 2 "$pm" write clf:/shared/d2/../../pub/mpi
else
	echo "FAIL: $pm not built (the ROMIO driver is part of make check)" >&2
	failed=$((failed + 1))
fi

echo "-- forged and stolen MUNGE credentials"
expect $u2 "ERR EACCES*authentication*Invalid credential" \
	env CLF_TEST_MUNGE_CRED=tamper "$pc" stat /f644
expect $u2 "ERR EACCES*made for another connection" \
	env CLF_TEST_MUNGE_CRED=unbound "$pc" stat /f644
expect $u2 "ERR EACCES*Expired credential" \
	env CLF_TEST_MUNGE_CRED=expired "$pc" stat /f644
# A credential of clfperm1 seen on one connection, replayed on another
# by clfperm1 itself and by clfperm2.
touch "$tmp/cred1"
chown clfperm1 "$tmp/cred1"
expect $u1 OK env CLF_TEST_MUNGE_SAVE="$tmp/cred1" "$pc" stat /f644
expect $u1 "ERR EACCES*Replayed credential" \
	env CLF_TEST_MUNGE_CRED="file:$tmp/cred1" "$pc" stat /f644
chmod 644 "$tmp/cred1"
expect $u2 "ERR EACCES*Replayed credential" \
	env CLF_TEST_MUNGE_CRED="file:$tmp/cred1" "$pc" stat /f644
# A MUNGE client may not name another user to act for.
expect $u2 "ERR EPERM*own user only" \
	env CLF_TEST_ACT_AS="$uid1:$gid1" "$pc" stat /f644
# Bytes that are no handshake at all.
python3 -c "
import os, socket
s = socket.create_connection(('127.0.0.1', $base))
s.sendall(os.urandom(300))
s.close()" || { echo "FAIL: cannot reach metad" >&2; failed=$((failed + 1)); }
# Still serving everyone.
expect $u1 OK "$pc" read /home1/own
expect $u2 OK "$pc" read /f644
expect root OK "$pc" read /home1/own

echo "-- auth = secret and root_squash: only holders of the secret, root as nobody"
"$clf" -c "$conf" down >/dev/null 2>&1
conf=$tmp/secret-only.conf
up "$conf" secret "root_squash = yes"
grep -q '^authentication: secret.*root_squash' "$tmp/up" ||
	{ echo "FAIL: clf up does not say auth secret, root_squash" >&2; failed=$((failed + 1)); }
expect $u2 "ERR EACCES*has no secret" "$pc" stat /
# A client that tries MUNGE all the same is refused by the daemons.
sed 's/^auth = secret/auth = munge/' "$conf" >"$tmp/client.conf"
chmod 644 "$tmp/client.conf"
conf=$tmp/client.conf expect $u2 "ERR EACCES*auth = secret" "$pc" stat /
conf=$tmp/secret-only.conf
expect root OK "$pc" stat /
expect root "ERR EACCES" "$pc" mkdir /squashed 0755

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && echo "PASS: users and permissions"
[ "$failed" -eq 0 ]
