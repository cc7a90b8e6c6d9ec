#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test_daemon_signals.sh -- the daemons' signals and log (libclf/runtime/log.h):
# SIGHUP never stops metad or an iod, it reopens their logs (logrotate
# moves a log away, sends HUP, and a new file appears with the new
# lines); every line is "<ISO 8601 UTC ms>Z <name>[<pid>] <level>: ";
# a failure to start is at level error; a connection's lines are
# written at log_level = debug only; SIGTERM
# stops both cleanly (pid files gone, "stopped" logged).  Started by
# systemd (Type=notify, $NOTIFY_SOCKET), each sends READY=1 to the socket
# once it serves (libclf/runtime/notify.h).
#
# usage: test_daemon_signals.sh [BUILD_DIR]   (default: $CLF_BUILD_DIR or build)

set -eu

here=$(cd "$(dirname "$0")" && pwd)
. "$here/instance_lib.sh"
instance_timed 120 "$0" "$@"
instance_test_begin signals "${1:-${CLF_BUILD_DIR:-build}}"

step=""
fail() {
	echo "FAIL: $step: $*" >&2
	for f in "$tmp"/*.err "$data"/meta/*.log* "$data"/iod0/*.log*; do
		[ -s "$f" ] || continue
		echo "--- $f" >&2
		tail -20 "$f" >&2
	done
	exit 1
}

# alive PIDFILE: the daemon of PIDFILE runs.
alive() {
	kill -0 "$(cat "$1")" 2>/dev/null
}

# wait_for FILE TEXT: up to 5 s for TEXT in FILE.
wait_for() {
	_i=0
	while ! grep -q "$2" "$1" 2>/dev/null; do
		_i=$((_i + 1))
		[ "$_i" -lt 50 ] || return 1
		sleep 0.1
	done
}

step="an instance"
instance_up "$clf" "$data" "$tmp/up.log" --iods 1 || fail "clf up"
mpid=$data/meta/metad.pid
ipid=$data/iod0/iod.pid
mlog=$data/meta/metad.log
ilog=$data/iod0/iod.log
[ -f "$mpid" ] && [ -f "$ipid" ] || fail "no pid files"
echo hello >"$tmp/a"
"$clf" -c "$conf" cp "$tmp/a" clf:/a >/dev/null 2>"$tmp/cp.err" || fail "clf cp"

step="the line format"
pid=$(cat "$mpid")
grep -Eq "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z metad\[$pid\] info: started: " "$mlog" ||
	fail "metad's start line is not in the common format"
pid=$(cat "$ipid")
grep -Eq "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z iod-0\[$pid\] info: listening on " "$ilog" ||
	fail "the iod's start line is not in the common format"
if grep -v -E "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]{12}Z (metad|iod-0)\[[0-9]+\] (error|warn|info|debug): " "$mlog" "$ilog"; then
	fail "lines above are not in the common format"
fi

step="a failure is logged at level error"
if "$build/metad/metad" -c "$conf" -f --log "$tmp/m2.log" 2>"$tmp/m2.err"; then
	fail "a second metad on the same store started"
fi
grep -Eq "Z metad\[[0-9]+\] error: cannot start: .*another metad" "$tmp/m2.log" ||
	fail "no error line for the second metad: $(cat "$tmp/m2.log")"

step="no line per connection at the default level"
if grep -q ": connected$" "$ilog"; then
	fail "the iod logs connections at level info"
fi

step="SIGHUP reopens the logs"
mv "$mlog" "$mlog.1"
mv "$ilog" "$ilog.1"
kill -HUP "$(cat "$mpid")" "$(cat "$ipid")"
wait_for "$mlog" "info: SIGHUP: log reopened" || fail "metad made no new log"
wait_for "$ilog" "info: SIGHUP: log reopened" || fail "the iod made no new log"
alive "$mpid" || fail "metad died of SIGHUP"
alive "$ipid" || fail "the iod died of SIGHUP"
"$clf" -c "$conf" cp clf:/a "$tmp/a.back" >/dev/null 2>"$tmp/cp.err" ||
	fail "no service after SIGHUP"
cmp "$tmp/a" "$tmp/a.back" || fail "the copy holds other bytes"
"$clf" -c "$conf" cp "$tmp/a" clf:/b >/dev/null 2>"$tmp/cp.err" || fail "clf cp"
if grep -q "SIGHUP" "$mlog.1" "$ilog.1"; then
	fail "lines after SIGHUP went to the moved file"
fi

step="log_level = debug logs connections"
"$clf" down --data "$data" >"$tmp/down.log" 2>&1 || fail "clf down"
sed -i 's/^\[global\]$/[global]\nlog_level = debug/' "$conf"
"$clf" up --data "$data" >"$tmp/up2.log" 2>&1 || fail "clf up again"
"$clf" -c "$conf" cp clf:/a "$tmp/a.back2" >/dev/null 2>"$tmp/cp.err" || fail "clf cp"
wait_for "$ilog" "debug: .*: connected$" ||
	fail "no connection line at log_level = debug"

step="SIGTERM stops cleanly"
kill -TERM "$(cat "$mpid")" "$(cat "$ipid")"
i=0
while [ -f "$mpid" ] || [ -f "$ipid" ]; do
	i=$((i + 1))
	[ "$i" -lt 100 ] || fail "pid files still there 10 s after SIGTERM"
	sleep 0.1
done
grep -q "info: stopped on SIGTERM" "$mlog" || fail "metad did not log its stop"
wait_for "$ilog" "info: stopped" || fail "the iod did not log its stop"

# notified DAEMON ARGS...: start DAEMON -f ARGS in the background with
# NOTIFY_SOCKET on a datagram socket this script listens on; wait for
# the first message (into $tmp/DAEMON.notify).  Sets $daemon_pid.
notified() {
	_d=$1
	shift
	rm -f "$tmp/notify.sock" "$tmp/$_d.notify"
	python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(20)
sys.stdout.write(s.recv(4096).decode())
' "$tmp/notify.sock" >"$tmp/$_d.notify" 2>"$tmp/notify.err" &
	_listener=$!
	_i=0
	while [ ! -S "$tmp/notify.sock" ]; do
		_i=$((_i + 1))
		[ "$_i" -lt 100 ] || fail "the test's socket did not appear"
		sleep 0.05
	done
	NOTIFY_SOCKET=$tmp/notify.sock "$build/$_d/$_d" -f "$@" \
		2>"$tmp/$_d.err" &
	daemon_pid=$!
	wait "$_listener" || fail "$_d sent nothing to NOTIFY_SOCKET"
}

step="READY=1 to NOTIFY_SOCKET"
notified metad -c "$conf"
mpid_n=$daemon_pid
[ "$(cat "$tmp/metad.notify")" = "READY=1" ] ||
	fail "metad sent '$(cat "$tmp/metad.notify")'"
notified iod -c "$conf" -n 0
ipid_n=$daemon_pid
[ "$(cat "$tmp/iod.notify")" = "READY=1" ] ||
	fail "the iod sent '$(cat "$tmp/iod.notify")'"
# Ready means serving: no wait between the word and the first request.
"$clf" -c "$conf" cp clf:/a "$tmp/a.back3" >/dev/null 2>"$tmp/cp.err" ||
	fail "no service once both said READY=1"
kill -TERM "$mpid_n" "$ipid_n"
wait "$mpid_n" || fail "metad -f did not exit 0 on SIGTERM"
wait "$ipid_n" || fail "iod -f did not exit 0 on SIGTERM"

echo "PASS: test_daemon_signals.sh"
