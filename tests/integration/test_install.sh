#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test_install.sh -- `make install DESTDIR=... PREFIX=/usr` puts every
# file where it belongs (installed_lib.sh says which and checks them):
# an instance runs from the installed programs alone, a program built
# with `pkg-config --cflags --libs clf` (and --static) runs against the
# installed library, mpicc-clf finds the installed libromio-clf.so, the
# kernel module (when built) is in lib/modules/KVER/updates; then
# the README's build-tree link line works as written, and `make
# uninstall` leaves nothing behind.
#
# usage: test_install.sh [BUILD_DIR]     (default: $CLF_BUILD_DIR or build)
set -eu

TIME_LIMIT=240
if [ -z "${CLF_INSTALL_TEST_TIMED:-}" ]; then
	CLF_INSTALL_TEST_TIMED=1
	export CLF_INSTALL_TEST_TIMED
	exec timeout -k 30 "$TIME_LIMIT" /bin/sh "$0" "$@"
fi

here=$(pwd)/tests/integration
. "$here/instance_lib.sh"
. "$here/installed_lib.sh"
installed_test_begin install "${1:-${CLF_BUILD_DIR:-build}}"

make -s --no-print-directory O="$build" install DESTDIR="$tmp/root" \
	PREFIX=/usr >"$tmp/make.log" 2>&1 ||
	fail "make install: $(cat "$tmp/make.log")"
romiodir=
[ -f "$build/romio-clf/libromio-clf.so" ] && romiodir=/usr/lib/clf
( check_installed "$tmp/root" /usr/lib "$romiodir" ) || exit 1
# The kernel client, where it was built (no depmod: DESTDIR).
if [ -f "$build/kernel/module/clf.ko" ]; then
	ko=$(find "$tmp/root/lib/modules" -path '*/updates/clf.ko' 2>/dev/null)
	[ -n "$ko" ] || fail "make install put no lib/modules/*/updates/clf.ko"
	cmp "$build/kernel/module/clf.ko" "$ko" || fail "$ko is not the built clf.ko"
fi
for u in clf-metad.service clf-iod@.service; do
	grep -q "^ExecStart=/usr/sbin/" "$tmp/root/usr/lib/systemd/system/$u" ||
		fail "$u is not installed with the installed daemons' path"
done

# The README's line, from the source tree.
write_prog "$tmp/readme.c"
grep -qF 'cc -o prog prog.c -Iinclude -Lbuild -lclf' README.md ||
	fail "README.md lost its build-tree link line"
cc -o "$tmp/readme" "$tmp/readme.c" -Iinclude -L"$build" -lclf ||
	fail "README's cc line"
LD_LIBRARY_PATH=$build ldd "$tmp/readme" | grep -q "libclf.so.0 => $build/libclf.so.0" ||
	fail "README's program does not find $build/libclf.so.0"

make -s --no-print-directory O="$build" uninstall DESTDIR="$tmp/root" \
	PREFIX=/usr >"$tmp/make.log" 2>&1 ||
	fail "make uninstall: $(cat "$tmp/make.log")"
left=$(find "$tmp/root" -type f -o -type l)
[ -z "$left" ] || fail "make uninstall left: $left"

echo "PASS: make install and uninstall"
