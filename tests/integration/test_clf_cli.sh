#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test_clf_cli.sh -- the clf command line against real daemons on
# loopback: up on a fresh directory, up again (a no-op), status, df, an
# iod killed with SIGKILL (status fails and names it, up restarts it), a
# start that fails half-way (what it started is stopped again), a daemon
# that cannot act on SIGTERM (down kills it), down, stale pid files,
# --iods, --metads (a namespace over three metads, files moved across
# them with clf mv), and bad usage.
#
# usage: test_clf_cli.sh [BUILD_DIR]     (default: $CLF_BUILD_DIR or build)
#
# Exits 0 on success, 1 on a failure, 77 when the daemons are not built.
# Everything runs in a fresh temporary directory on ports of its own
# derived from the shell's pid, under an overall time limit, and a trap
# stops every daemon and removes the directory whatever happens (past
# the limit, instance_timed does).

set -eu

TIME_LIMIT=240	# seconds, the whole test
. "$(dirname "$0")/instance_lib.sh"
instance_timed "$TIME_LIMIT" "$0" "$@"

build=${1:-${CLF_BUILD_DIR:-build}}
clf=$build/tools/clf
if [ ! -x "$build/metad/metad" ] || [ ! -x "$build/iod/iod" ]; then
	echo "SKIP: $build/metad/metad or $build/iod/iod not built yet"
	exit 77
fi
if [ ! -x "$clf" ]; then
	echo "FAIL: $clf not built" >&2
	exit 1
fi
# The daemons next to this clf, not whatever CLF_BIN_DIR or an
# inherited configuration say.
unset CLF_BIN_DIR CLF_CONFIG CLF_DATA_DIR CLF_BASE_PORT || true

tmp=$(mktemp -d "${CLF_TEST_TMP:-${TMPDIR:-/tmp}}/clf-cli-test.XXXXXX")
a=$tmp/a	# the instance under test
b=$tmp/b	# one whose ports clash with a's
c=$tmp/c	# one with two iods
e=$tmp/e	# one over three metads

cleanup() {
	rc=$?
	trap - EXIT INT TERM HUP
	# Every local daemon of both instances, whatever state they are in.
	for d in "$a" "$b" "$c" "$e"; do
		[ -f "$d/clf.conf" ] || continue
		if ! "$clf" down --data "$d" >"$tmp/down" 2>&1; then
			echo "cleanup: clf down --data $d failed:" >&2
			cat "$tmp/down" >&2
		fi
	done
	rm -rf "$tmp"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 124' INT TERM HUP

step=""

. "$(dirname "$0")/cli_lib.sh"

expect_rc() {
	[ "$rc" -eq "$1" ] || fail "exit status $rc, expected $1"
}

# expect_line FILE PATTERN: a line of FILE matches the extended regex.
expect_line() {
	grep -Eq -- "$2" "$tmp/$1" || fail "no line of $1 matches '$2'"
}

no_line() {
	if grep -Eq -- "$2" "$tmp/$1"; then
		fail "a line of $1 matches '$2'"
	fi
}

# count FILE PATTERN: how many lines match.
count() {
	grep -Ec -- "$2" "$tmp/$1" || true
}

# A live process: kill -0 alone would count zombies, which a container
# whose init does not reap keeps forever.
alive() {
	kill -0 "$1" 2>/dev/null || return 1
	[ -r "/proc/$1/stat" ] || return 0
	state=$(sed -n 's/^.*) \(.\).*$/\1/p' "/proc/$1/stat" 2>/dev/null)
	[ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ]
}

# wait_dead PID: up to 10 s.
wait_dead() {
	i=0
	while alive "$1"; do
		i=$((i + 1))
		[ "$i" -le 200 ] || fail "process $1 still alive after 10 s"
		sleep 0.05
	done
}

# The pids in the pid files of instance $1, one line each: "NAME PID".
pids() {
	for f in "$1"/meta/metad.pid "$1"/iod*/iod.pid; do
		[ -f "$f" ] || continue
		echo "$(basename "$(dirname "$f")") $(cat "$f")"
	done
}

# ---------------------------------------------------------------------
step="up on a fresh directory"
# Five ports of our own from the pid, below the ephemeral range, where
# no outgoing connection can hold one; b's start two below a's, so that
# its iod 1 wants a's metad port.  If another program holds one, try
# another block: a clash there is not what this test is about.
eph_lo=32768
eph_hi=60999
if [ -r /proc/sys/net/ipv4/ip_local_port_range ]; then
	# shellcheck disable=SC2046
	set -- $(cat /proc/sys/net/ipv4/ip_local_port_range)
	eph_lo=$1
	eph_hi=$2
fi
if [ $((eph_lo - 10)) -gt 11002 ]; then
	lo=10002
	span=$((eph_lo - 10 - lo))
else
	lo=$((eph_hi + 3))
	span=$((65530 - lo))
fi
tries=0
while :; do
	base=$((lo + ($$ * 7 + tries * 613) % span))
	run "$clf" up --data "$a" --base-port "$base"
	if [ "$rc" -ne 0 ] && grep -q "address already in use" "$tmp/err" &&
		[ "$tries" -lt 4 ]; then
		"$clf" down --data "$a" >/dev/null 2>&1 || true
		rm -rf "$a"
		tries=$((tries + 1))
		continue
	fi
	break
done
expect_rc 0
[ -f "$a/clf.conf" ] || fail "no $a/clf.conf"
[ "$(stat -c %a "$a/clf.conf")" = 600 ] || fail "clf.conf is not mode 0600"
grep -Eq "^secret_file = $a/secret\$" "$a/clf.conf" ||
	fail "clf.conf does not name the generated secret file"
[ "$(stat -c %a "$a/secret")" = 600 ] || fail "secret is not mode 0600"
grep -Eq '^[0-9a-f]{64}$' "$a/secret" || fail "secret is not 32 bytes in hex"
expect_line out "^created $a/clf.conf with a new secret$"
expect_line out "^authentication: (munge|secret) \("
expect_line out "^metad +- +127\.0\.0\.1:$base +started +pid [0-9]+$"
for i in 0 1 2 3; do
	expect_line out "^iod +$i +127\.0\.0\.1:$((base + 1 + i)) +started +pid [0-9]+$"
done
[ "$(count out ' started ')" -eq 5 ] || fail "not 5 daemons started"
pids "$a" >"$tmp/pids1"
[ "$(wc -l <"$tmp/pids1")" -eq 5 ] || fail "not 5 pid files"
while read -r name pid; do
	alive "$pid" || fail "$name (pid $pid) is not running"
	# The pid up printed is the pid file's.
	grep -q " pid $pid\$" "$tmp/out" || fail "up did not print pid $pid"
done <"$tmp/pids1"
cp "$a/clf.conf" "$tmp/conf1"

step="up again is a no-op"
run "$clf" up --data "$a"
expect_rc 0
[ "$(count out ' running +pid ')" -eq 5 ] || fail "not 5 daemons running"
no_line out 'started|created'
pids "$a" >"$tmp/pids2"
cmp -s "$tmp/pids1" "$tmp/pids2" || fail "pids changed"
cmp -s "$tmp/conf1" "$a/clf.conf" || fail "clf.conf changed"
# The same instance through -c, and with matching shape options.
run "$clf" -c "$a/clf.conf" up
expect_rc 0
[ "$(count out ' running ')" -eq 5 ] || fail "-c: not 5 daemons running"
run "$clf" up --data "$a" --iods 4 --base-port "$base"
expect_rc 0
run "$clf" up --data "$a" --iods 3
expect_rc 1
expect_line err "has 4 iods, not 3"

step="status shows 5 reachable daemons"
run "$clf" status --data "$a"
expect_rc 0
expect_line out '^ROLE +INDEX +ADDRESS +STATE +UPTIME +CONNS +VIEWS +TOTAL +AVAIL +DETAIL$'
[ "$(awk '$4 == "reachable"' "$tmp/out" | wc -l)" -eq 5 ] ||
	fail "not 5 reachable lines"
expect_line out "^metad +- +127\.0\.0\.1:$base +reachable +[0-9]+[smhd]"
[ "$(awk '$1 == "iod" && $4 == "reachable" && $7 ~ /^[0-9]+$/ &&
	$8 ~ /^[0-9.]+[BKMGTPE]?$/ && $9 ~ /^[0-9.]+[BKMGTPE]?$/' \
	"$tmp/out" | wc -l)" -eq 4 ] || fail "iod lines lack views or capacity"
# status AVAIL and df AVAIL count the same bytes (the disk is shared
# and busy: equal within 1%).
run "$clf" status --data "$a" -b -H
awk '$1 == "iod" { print $2, $9 }' "$tmp/out" >"$tmp/st_avail"
run "$clf" df --data "$a" -b -H
awk '$1 ~ /^[0-3]$/ { print $1, $5 }' "$tmp/out" >"$tmp/df_avail"
join "$tmp/st_avail" "$tmp/df_avail" | awk '
	{ n++; d = $2 - $3; if (d < 0) d = -d; if (d > $3 / 100) bad = 1 }
	END { exit !(n == 4 && !bad) }' ||
	fail "status AVAIL and df AVAIL differ: $(cat "$tmp/st_avail") / $(cat "$tmp/df_avail")"
# Found the other ways too: -c and $CLF_DATA_DIR; -H drops the header.
run "$clf" -c "$a/clf.conf" status -H
expect_rc 0
[ "$(wc -l <"$tmp/out")" -eq 5 ] || fail "-H: not 5 lines"
run env CLF_DATA_DIR="$a" "$clf" status -b
expect_rc 0
[ "$(awk '$1 == "iod" && $8 ~ /^[0-9]+$/' "$tmp/out" | wc -l)" -eq 4 ] ||
	fail "-b: capacities not in bytes"
# Global options after the subcommand too.
run "$clf" status -H -c "$a/clf.conf"
expect_rc 0
[ "$(wc -l <"$tmp/out")" -eq 5 ] || fail "status -c: not 5 lines"
run "$clf" df --config="$a/clf.conf" -H
expect_rc 0
# The system-wide file last ($CLF_TEST_SYSCONFDIR stands for /etc).
mkdir -p "$tmp/etc/clf"
cp "$a/clf.conf" "$tmp/etc/clf/clf.conf"
run sh -c "cd '$tmp' && CLF_TEST_SYSCONFDIR='$tmp/etc' '$(realpath "$clf")' status -H"
expect_rc 0
[ "$(awk '$4 == "reachable"' "$tmp/out" | wc -l)" -eq 5 ] ||
	fail "$tmp/etc/clf/clf.conf: not 5 reachable lines"

step="df shows 4 iods and the total"
run "$clf" df --data "$a"
expect_rc 0
expect_line out '^IOD +ADDRESS +SIZE +USED +AVAIL +USE% +DETAIL$'
[ "$(awk '$1 ~ /^[0-3]$/ && $6 ~ /^[0-9]+%$/' "$tmp/out" | wc -l)" -eq 4 ] ||
	fail "not 4 iod lines"
expect_line out '^total +- +[0-9.]+[BKMGTPE]? '
run "$clf" df --data "$a" -b -H
expect_rc 0
[ "$(wc -l <"$tmp/out")" -eq 5 ] || fail "-H: not 5 lines"
# The total is the sum of the iods, to the byte.
awk '$1 ~ /^[0-3]$/ { s += $3; u += $4; v += $5 }
     $1 == "total" { t = $3; tu = $4; tv = $5 }
     END { exit !(s == t && u == tu && v == tv && t > 0) }' "$tmp/out" ||
	fail "total is not the sum of the iods"

step="-h is human-readable, --json machine-readable"
run "$clf" df --data "$a" -h
expect_rc 0
expect_line out '^IOD +ADDRESS +SIZE'
expect_line out '^total +- +[0-9.]+[BKMGTPE] '
run "$clf" df --data "$a" --json
expect_rc 0
python3 -c '
import json, sys
d = json.load(sys.stdin)
assert [i["index"] for i in d["iods"]] == [0, 1, 2, 3], d
assert d["total"]["size"] == sum(i["size"] for i in d["iods"]) > 0, d
assert all(0 <= i["use_percent"] <= 100 for i in d["iods"]), d
' <"$tmp/out" || fail "df --json"
run "$clf" status --data "$a" --json
expect_rc 0
python3 -c '
import json, sys
d = json.load(sys.stdin)["daemons"]
assert [x["role"] for x in d] == ["metad"] + ["iod"] * 4, d
assert all(x["state"] == "reachable" and x["uptime_ms"] >= 0 for x in d), d
assert d[0]["index"] is None and d[0]["avail"] is None, d
assert all(x["avail"] > 0 and x["total"] >= x["avail"] for x in d[1:]), d
# An iod says what its RDMA receive pool holds (1.25): none over TCP.
assert d[0]["rdma_rx_buffers"] is None, d
assert all(x["rdma_rx_buffers"] == x["rdma_rx_posted"] == 0 for x in d[1:]), d
' <"$tmp/out" || fail "status --json"
run "$clf" status --data "$a" --help
expect_rc 0
expect_line out '^usage: clf .*status'

step="an iod killed with SIGKILL"
iod2=$(cat "$a/iod2/iod.pid")
kill -9 "$iod2"
wait_dead "$iod2"
run "$clf" status --data "$a"
expect_rc 1
# Refused -- or, when a daemon of another test running beside this one
# has just taken the freed port, closed by it at the handshake.
expect_line out "^iod +2 +127\.0\.0\.1:$((base + 3)) +unreachable .*(connection refused|closed by the daemon)"
expect_line out "not running \\(pid $iod2 is gone\\)"
[ "$(awk '$4 == "reachable"' "$tmp/out" | wc -l)" -eq 4 ] ||
	fail "the others are not all reachable"
expect_line err 'iod 2'
run "$clf" df --data "$a"
expect_rc 1
expect_line out '^2 .* (connection refused|closed by the daemon.*)$'
expect_line out '^total '
expect_line err 'iod 2'

step="up restarts the killed iod"
run "$clf" up --data "$a"
expect_rc 0
expect_line out '^iod +2 .* started +pid [0-9]+$'
[ "$(count out ' running +pid ')" -eq 4 ] || fail "the others were touched"
new2=$(cat "$a/iod2/iod.pid")
[ "$new2" != "$iod2" ] || fail "iod 2 has its old pid"
alive "$new2" || fail "new iod 2 (pid $new2) is not running"
run "$clf" status --data "$a"
expect_rc 0

step="a failing up stops what it started"
# b's metad and iod 0 start; its iod 1 wants a's metad port.
run "$clf" up --data "$b" --base-port $((base - 2))
expect_rc 1
expect_line err "^clf: cannot start iod 1 \\(127\\.0\\.0\\.1:$base\\): address already in use$"
expect_line out '^metad .* started +pid [0-9]+$'
expect_line out '^iod +0 .* started +pid [0-9]+$'
# shellcheck disable=SC2013 # one pid per line
for pid in $(sed -n 's/^.* started *pid \([0-9]*\)$/\1/p' "$tmp/out"); do
	alive "$pid" && fail "process $pid of b still runs"
done
[ -z "$(pids "$b")" ] || fail "b left pid files"
expect_line err 'stopped metad'
run "$clf" status --data "$a"
expect_rc 0

step="down kills a daemon that does not stop"
pids "$a" >"$tmp/pids3"
iod3=$(cat "$a/iod3/iod.pid")
# Stopped, it cannot act on SIGTERM; SIGKILL still ends it.
kill -STOP "$iod3"
run "$clf" down --data "$a"
expect_rc 0
expect_line out "^iod +3 .* killed +pid $iod3$"
expect_line err "warning: iod 3 \\(pid $iod3\\) did not exit"
[ "$(count out ' stopped +pid ')" -eq 4 ] || fail "not 4 daemons stopped"
while read -r name pid; do
	alive "$pid" && fail "$name (pid $pid) still runs"
done <"$tmp/pids3"
[ -z "$(pids "$a")" ] || fail "pid files left: $(pids "$a")"

step="status and df once everything is down"
run "$clf" status --data "$a"
expect_rc 1
[ "$(awk '$4 == "unreachable"' "$tmp/out" | wc -l)" -eq 5 ] ||
	fail "not 5 unreachable lines"
expect_line out 'no pid file'
run "$clf" df --data "$a"
expect_rc 1
# No total of 0 bytes at 0%: there is nothing to add up.
expect_line out '^total +- +- +- +- +- +every iod is down$'
no_line out '0%'
expect_line err '^clf: none of the 4 iods answered, so there is no total: '
run "$clf" df --data "$a" --json
expect_rc 1
python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["total"] is None and all("error" in i for i in d["iods"]), d
' <"$tmp/out" || fail "df --json with every iod down"

step="down again, with a stale pid file"
# The pid of a process that has exited.
sh -c 'echo $$' >"$a/iod0/iod.pid"
run "$clf" down --data "$a"
expect_rc 0
expect_line out '^iod +0 .* not-running +removed stale pid file'
[ "$(count out ' not-running ')" -eq 5 ] || fail "not 5 not-running lines"
[ ! -e "$a/iod0/iod.pid" ] || fail "stale pid file left"

step="up --iods shapes a new instance"
run "$clf" up --data "$c" --iods 2 --base-port $((base + 10))
expect_rc 0
[ "$(count out ' started ')" -eq 3 ] || fail "not 3 daemons started"
expect_line out "^iod +1 +127\.0\.0\.1:$((base + 12)) +started"
[ "$(grep -c '^\[iod\]' "$c/clf.conf")" -eq 2 ] || fail "not 2 iods in clf.conf"
run "$clf" -c "$c/clf.conf" status -H
expect_rc 0
[ "$(awk '$4 == "reachable"' "$tmp/out" | wc -l)" -eq 3 ] ||
	fail "not 3 reachable lines"
run "$clf" -c "$c/clf.conf" df -H
expect_rc 0
[ "$(awk '$1 ~ /^[01]$/' "$tmp/out" | wc -l)" -eq 2 ] || fail "not 2 iods"
run "$clf" -c "$c/clf.conf" down
expect_rc 0
[ "$(count out ' stopped ')" -eq 3 ] || fail "not 3 daemons stopped"
[ -z "$(pids "$c")" ] || fail "pid files left in c"

step="up --metads spreads the namespace over several metads"
run "$clf" up --data "$e" --iods 2 --metads 3 --base-port $((base + 20))
expect_rc 0
[ "$(count out ' started ')" -eq 5 ] || fail "not 5 daemons started"
expect_line out "^metad +2 +127\.0\.0\.1:$((base + 24)) +started"
[ "$(grep -c '^\[metad\]' "$e/clf.conf")" -eq 3 ] || fail "not 3 metads in clf.conf"
run "$clf" -c "$e/clf.conf" status -H
expect_rc 0
[ "$(awk '$1 == "metad" && $4 == "reachable"' "$tmp/out" | wc -l)" -eq 3 ] ||
	fail "not 3 reachable metads"
echo "across metads" >"$tmp/f"
for i in 0 1 2 3 4 5; do
	run "$clf" -c "$e/clf.conf" mkdir "/d$i"
	expect_rc 0
done
run "$clf" -c "$e/clf.conf" cp "$tmp/f" clf:/d0/f
expect_rc 0
for i in 1 2 3 4 5; do
	run "$clf" -c "$e/clf.conf" mv "/d$((i - 1))/f" "/d$i/f"
	expect_rc 0
done
run "$clf" -c "$e/clf.conf" mv /d0 /d5/d0
expect_rc 0
run "$clf" -c "$e/clf.conf" ls /
expect_rc 0
no_line out '^d0$'
run "$clf" -c "$e/clf.conf" cp clf:/d5/f "$tmp/back"
expect_rc 0
cmp -s "$tmp/f" "$tmp/back" || fail "the file moved across metads lost its data"
run "$clf" -c "$e/clf.conf" down
expect_rc 0
[ "$(count out ' stopped ')" -eq 5 ] || fail "not 5 daemons stopped"

step="bad usage"
run "$clf"
expect_rc 2
run "$clf" frobnicate
expect_rc 2
expect_line err "^clf: 'frobnicate' is not a clf command$"
run "$clf" up --bogus
expect_rc 2
expect_line err "unknown option '--bogus'"
run "$clf" up --iods 0
expect_rc 2
run "$clf" up --base-port 70000
expect_rc 2
run "$clf" status extra
expect_rc 2
run "$clf" df --data
expect_rc 2
run "$clf" -c "$a/clf.conf" up --data "$a"
expect_rc 2
run "$clf" --help
expect_rc 0
expect_line out '^usage: clf '
for c in up down status df; do
	run "$clf" "$c" --help
	expect_rc 0
	expect_line out "^usage: clf .*$c"
	run "$clf" help "$c"
	expect_rc 0
done

step="commands that need the secret say so"
mkdir "$tmp/empty"
run env CLF_DATA_DIR="$tmp/empty" CLF_TEST_SYSCONFDIR="$tmp/empty" \
	"$clf" status
expect_rc 1
expect_line err "no configuration file: tried .*CLF_CONFIG.*$tmp/empty/clf.conf, $tmp/empty/clf/clf.conf"
printf '[global]\nmetad = 127.0.0.1:1\niod = 127.0.0.1:2\n' >"$tmp/empty/clf.conf"
run env CLF_DATA_DIR="$tmp/empty" "$clf" status
expect_rc 1
expect_line err 'no secret'
rm "$tmp/empty/clf.conf"
run "$clf" status --data "$tmp/empty"
expect_rc 1
expect_line err "no configuration in $tmp/empty"

echo "PASS: clf command line"
