#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# test_protect.sh -- messages after the handshake against a man in the
# middle, with real daemons (docs/security.md, "protection").
#
# For protection = integrity and privacy: an instance with one iod, and a
# client configuration that reaches the iod through mitm_proxy.py.
#   - pass: `clf cp` of a file made of a marker string goes through the
#     proxy and back unchanged; with privacy the marker never crosses the
#     wire (the proxy's capture holds no copy of it), with integrity it
#     does (so the grep can see it);
#   - flip: the proxy flips one byte of the write's data: the cp fails,
#     the iod logs the failed check and closes the connection, the file
#     holds none of that data, and the iod goes on serving.
# The unit test test_seal covers replay, drop and reorder.
set -u

build=${1:-${CLF_BUILD_DIR:-build}}
here=$(dirname "$0")
clf=$build/tools/clf
proxy=$here/mitm_proxy.py
for p in "$clf" "$build/metad/metad" "$build/iod/iod"; do
	[ -x "$p" ] || { echo "FAIL: $p not built" >&2; exit 1; }
done
unset CLF_BIN_DIR CLF_CONFIG CLF_DATA_DIR CLF_BASE_PORT LD_PRELOAD || true

tmp=$(mktemp -d "${TMPDIR:-/tmp}/clf-protect-test.XXXXXX")
proxy_pid=
conf=

cleanup() {
	rc=$?
	trap - EXIT INT TERM HUP
	[ -n "$proxy_pid" ] && kill "$proxy_pid" 2>/dev/null
	[ -n "$conf" ] && "$clf" -c "$conf" down >/dev/null 2>&1
	rm -rf "$tmp"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 124' INT TERM HUP

passed=0
failed=0
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL: $level: $*" >&2; }

head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$tmp/secret"
chmod 600 "$tmp/secret"

# up LEVEL: an instance with one iod; $conf direct, $pconf via the proxy.
up() {
	tries=0
	while :; do
		base=$((30000 + ($$ * 29 + tries * 641) % 9000))
		conf=$tmp/$1.conf
		pconf=$tmp/$1-proxy.conf
		for c in "$conf" "$pconf"; do
			iodport=$((base + 1))
			# the proxy's own port replaces it (proxy())
			[ "$c" = "$pconf" ] && iodport=$((base + 2))
			cat >"$c" <<CONF
[global]
secret_file = $tmp/secret
auth = secret
protection = $1
timeout_ms = 3000
data_dir = $tmp/data-$1
metad = 127.0.0.1:$base
iod = 127.0.0.1:$iodport
CONF
		done
		"$clf" -c "$conf" up >"$tmp/up" 2>&1 && break
		"$clf" -c "$conf" down >/dev/null 2>&1
		tries=$((tries + 1))
		if ! grep -q "address already in use" "$tmp/up" ||
			[ "$tries" -ge 5 ]; then
			echo "FAIL: clf up:" >&2
			cat "$tmp/up" >&2
			exit 1
		fi
	done
	grep -q "^protection: $1" "$tmp/up" ||
		{ echo "FAIL: clf up does not say protection $1" >&2; exit 1; }
}

# proxy MODE: start the proxy on a port the kernel picks (a fixed one
# may be another test's, or a connection's own port, on a busy machine)
# and point the proxy config's iod at it.
proxy() {
	: >"$tmp/capture"
	python3 "$proxy" 0 $((base + 1)) 16 "$1" "$tmp/capture" \
		>"$tmp/proxy.out" 2>&1 &
	proxy_pid=$!
	n=0
	while ! grep -q listening "$tmp/proxy.out" && [ "$n" -lt 50 ]; do
		sleep 0.1
		n=$((n + 1))
	done
	pport=$(sed -n 's/^listening \([0-9]*\)$/\1/p' "$tmp/proxy.out")
	[ -n "$pport" ] ||
		{ echo "FAIL: the proxy did not start: $(cat "$tmp/proxy.out")" >&2; exit 1; }
	sed -i "s/^iod = .*/iod = 127.0.0.1:$pport/" "$pconf"
}

stop_proxy() {
	kill "$proxy_pid" 2>/dev/null
	wait "$proxy_pid" 2>/dev/null
	proxy_pid=
}

# marked NAME: a 256 KiB file of one marker string.
marked() {
	m="CLFMARK-$1-$$"
	: >"$tmp/$1"
	i=0
	while [ "$i" -lt 2048 ]; do
		printf '%s%0*d' "$m" $((128 - ${#m})) "$i"
		i=$((i + 1))
	done >"$tmp/$1"
}

for level in integrity privacy; do
	up "$level"
	iodlog=$tmp/data-$level/iod0/iod.log

	# pass: through the proxy and back.
	proxy pass
	marked pass-$level
	if "$clf" -c "$pconf" cp "$tmp/pass-$level" clf:/pass >/dev/null 2>"$tmp/err" &&
		"$clf" -c "$pconf" cp clf:/pass "$tmp/back" >/dev/null 2>>"$tmp/err" &&
		cmp -s "$tmp/pass-$level" "$tmp/back"; then
		ok
	else
		bad "cp through the proxy: $(cat "$tmp/err")"
	fi
	stop_proxy
	if grep -q "CLFMARK-pass-$level" "$tmp/capture"; then
		[ "$level" = integrity ] && ok || bad "the file's bytes crossed the wire in clear"
	else
		[ "$level" = privacy ] && ok || bad "the capture lacks the clear bytes (grep cannot see them)"
	fi

	# flip: detected, logged, nothing written, the iod goes on.
	proxy flip
	marked flip-$level
	if "$clf" -c "$pconf" cp "$tmp/flip-$level" clf:/flip >/dev/null 2>"$tmp/err"; then
		bad "a write with a flipped byte succeeded"
	else
		ok
	fi
	stop_proxy
	grep -q "flipped" "$tmp/proxy.out" || bad "the proxy flipped nothing"
	if grep -q "fails its $level check" "$iodlog"; then
		ok
	else
		bad "the iod did not log the failed check"
	fi
	"$clf" -c "$conf" cp clf:/flip "$tmp/flipped" >/dev/null 2>&1
	if [ -f "$tmp/flipped" ] && grep -q "CLFMARK-flip" "$tmp/flipped"; then
		bad "data of the altered message was written"
	else
		ok
	fi
	if "$clf" -c "$conf" cp "$tmp/pass-$level" clf:/after >/dev/null 2>"$tmp/err"; then
		ok
	else
		bad "the iod stopped serving: $(cat "$tmp/err")"
	fi
	"$clf" -c "$conf" down >/dev/null 2>&1
	conf=
	rm -f "$tmp/flipped" "$tmp/back"
done

echo "test_protect: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
