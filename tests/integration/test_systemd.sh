#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test_systemd.sh -- the service units of systemd/ are valid:
# systemd-analyze verify on each, with @sbindir@ filled in with this
# build's daemons (verify checks that ExecStart's program exists), and
# each names a daemon option that exists.  systemd-analyze verify needs
# no running systemd (it loads the units offline), so it runs in a
# container too.
#
# usage: test_systemd.sh [BUILD_DIR]   (default: $CLF_BUILD_DIR or build)

set -eu

build=${1:-${CLF_BUILD_DIR:-build}}
build=$(cd "$build" && pwd)
here=$(cd "$(dirname "$0")/../.." && pwd)
if ! command -v systemd-analyze >/dev/null; then
	echo "SKIP: no systemd-analyze (package systemd; make deps installs it)"
	exit 77
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/clf-systemd.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# Both daemons in one directory, as sbindir holds them.
mkdir "$tmp/sbin" "$tmp/units"
ln -s "$build/metad/metad" "$tmp/sbin/metad"
ln -s "$build/iod/iod" "$tmp/sbin/iod"
for u in clf-metad.service clf-iod@.service; do
	sed -e "s|@sbindir@|$tmp/sbin|g" -e "s|@sysconfdir@|/etc|g" \
		"$here/systemd/$u.in" >"$tmp/units/$u"
done
cp "$tmp/units/clf-iod@.service" "$tmp/units/clf-iod@0.service"

for u in clf-metad.service clf-iod@0.service; do
	# --man=no: the man pages are clf's own, not installed here.
	if ! systemd-analyze verify --man=no "$tmp/units/$u" \
		>"$tmp/verify.out" 2>&1; then
		cat "$tmp/verify.out" >&2
		fail "systemd-analyze verify $u"
	fi
	# Warnings do not fail verify; they fail this test.
	if grep -v "^$" "$tmp/verify.out" | grep -q .; then
		cat "$tmp/verify.out" >&2
		fail "systemd-analyze verify $u said something"
	fi
done

# The options in ExecStart are the daemons' own.
"$build/metad/metad" --foreground --help >/dev/null ||
	fail "metad does not take --foreground"
"$build/iod/iod" --foreground --index 0 --help >/dev/null ||
	fail "iod does not take --foreground --index"
grep -q "^Type=notify$" "$tmp/units/clf-metad.service" ||
	fail "clf-metad.service is not Type=notify"
grep -q "^Type=notify$" "$tmp/units/clf-iod@0.service" ||
	fail "clf-iod@.service is not Type=notify"

echo "PASS: systemd units"
