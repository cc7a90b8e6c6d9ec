#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test_depgraph.sh -- scripts/depgraph.sh passes on this tree and fails
# on each kind of breakage it exists to catch, planted in a copy: an
# engine file including a runtime header (a layer upward), a tool
# including the client's private client_i.h, two client headers
# including each other (a cycle), and two files calling each other (a
# cycle of calls, found in their objects); the cycles both in libclf/
# and in metad/, which has none left either.
#
# usage: test_depgraph.sh      (from the source tree; exits 0 or 1)
set -eu

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

scripts/depgraph.sh --quiet >/dev/null || fail "this tree does not pass"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

plant() {	# NAME: a fresh copy to break
	rm -rf "$tmp/$1"
	mkdir "$tmp/$1"
	cp -r include libclf iod metad kernel tools romio-clf bench "$tmp/$1"
}

expect() {	# NAME WHAT: depgraph fails on copy NAME saying WHAT
	if scripts/depgraph.sh --quiet "$tmp/$1" >/dev/null 2>"$tmp/err"; then
		fail "$1: depgraph passed"
	fi
	grep -q "$2" "$tmp/err" || fail "$1: no '$2' in: $(cat "$tmp/err")"
}

plant up
printf '#include "proto.h"\n' >>"$tmp/up/libclf/engine/pattern.c"
expect up "layer: libclf/engine/pattern.c (libclf/engine) includes libclf/runtime/proto.h"

plant private
printf '#include "client_i.h"\n' >>"$tmp/private/tools/tool_fs.c"
expect private "private: tools/tool_fs.c includes libclf/client/client_i.h"

plant cycle
printf '#include "lock.h"\n' >>"$tmp/cycle/libclf/client/client.h"
printf '#include "client.h"\n' >>"$tmp/cycle/libclf/client/lock.h"
expect cycle "cycle (2 modules): libclf/client/client libclf/client/lock"

plant mcycle
printf '#include "mds_append.h"\n' >>"$tmp/mcycle/metad/mds_lock.h"
printf '#include "mds_lock.h"\n' >>"$tmp/mcycle/metad/mds_append.h"
expect mcycle "cycle (2 modules): metad/mds_append metad/mds_lock"

calls() {	# DIR: two files of DIR calling each other fail
	n=calls-$(echo "$1" | tr / -)
	plant "$n"
	mkdir -p "$tmp/objs-$n/$1"
	printf 'int ping(int n);\nint pong(int n) { return n ? ping(n - 1) : 0; }\n' \
		>"$tmp/$n/$1/pong.c"
	printf 'int pong(int n);\nint ping(int n) { return n ? pong(n - 1) : 1; }\n' \
		>"$tmp/$n/$1/ping.c"
	for f in ping pong; do
		${CC:-cc} -c -o "$tmp/objs-$n/$1/$f.o" "$tmp/$n/$1/$f.c" ||
			fail "cannot compile $f.c"
	done
	if scripts/depgraph.sh --quiet --objs "$tmp/objs-$n" "$tmp/$n" \
			>/dev/null 2>"$tmp/err"; then
		fail "calls in $1: depgraph passed"
	fi
	grep -q "calls in $1: cycle (2 files): ping.o pong.o" "$tmp/err" ||
		fail "calls in $1: $(cat "$tmp/err")"
}
calls libclf/client
calls metad

echo "PASS: depgraph finds layer, private header, include and call cycles"
