#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test_deb.sh -- the packages of `make deb` (BUILD_DIR/deb): lintian finds
# no error or warning; every dependency outside clf is installed here
# (so dpkg -i would configure them); dpkg installs them into a root of
# its own (--root: the machine's /sbin/mount.clf and /usr are shared
# with other tests and users), where an instance runs from the packaged
# files only, a program builds with pkg-config and mpicc-clf links the
# packaged libromio-clf.so (installed_lib.sh), clf-modules' clf.ko is
# the module; then dpkg --purge leaves
# no file behind.
#
# usage: test_deb.sh [BUILD_DIR]     (default: $CLF_BUILD_DIR or build)
set -eu

TIME_LIMIT=240
if [ -z "${CLF_DEB_TEST_TIMED:-}" ]; then
	CLF_DEB_TEST_TIMED=1
	export CLF_DEB_TEST_TIMED
	exec timeout -k 30 "$TIME_LIMIT" /bin/sh "$0" "$@"
fi

here=$(pwd)/tests/integration
. "$here/instance_lib.sh"
. "$here/installed_lib.sh"
installed_test_begin deb "${1:-${CLF_BUILD_DIR:-build}}"

debs=$(ls "$build"/deb/*.deb 2>/dev/null | grep -v -- '-dbgsym_' || true)
for p in clf-server clf-client libclf0 libclf-dev; do
	echo "$debs" | grep -q "/${p}_" || fail "no $p package in $build/deb (make deb)"
done
romiodir=
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
if echo "$debs" | grep -q '/romio-clf_'; then
	romiodir=/usr/lib/$multiarch/clf
fi

# shellcheck disable=SC2086
lintian --fail-on error,warning $debs >"$tmp/lintian" 2>&1 ||
	fail "lintian: $(grep -v '^running with root' "$tmp/lintian")"
grep -E '^[EW]: ' "$tmp/lintian" && fail "lintian warns"

for d in $debs; do
	dpkg-deb -f "$d" Depends | tr ',' '\n' | sed 's/|.*//; s/(.*//; s/ //g' |
	while read -r dep; do
		case $dep in
		'' | clf-* | libclf*) continue ;;
		esac
		dpkg-query -W -f='${Status}' "$dep" 2>/dev/null |
			grep -q 'install ok installed' ||
			fail "$(basename "$d") depends on $dep, not installed here"
	done
done

# dpkg -i into the private root: its own database, the machine's
# libraries (--force-depends: they are not in that database).
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
: >"$root/var/lib/dpkg/status"
dpkg_root() {
	dpkg --root="$root" --force-script-chrootless --force-depends \
		--force-not-root --log=/dev/null "$@"
}
# shellcheck disable=SC2086
dpkg_root -i $debs >"$tmp/dpkg.log" 2>&1 ||
	fail "dpkg -i: $(cat "$tmp/dpkg.log")"
n=$(dpkg_root -l | grep -c '^ii ')
[ "$n" -eq "$(echo "$debs" | wc -l)" ] || fail "not every package installed: $(dpkg_root -l)"

( check_installed "$root" "/usr/lib/$multiarch" "$romiodir" ) || exit 1

# The kernel client, where clf.ko was built: under the headers' kernel.
modules=
if echo "$debs" | grep -q '/clf-modules_'; then
	modules=clf-modules
	ko=$(find "$root/lib/modules" -path '*/updates/clf.ko')
	[ -n "$ko" ] || fail "clf-modules installed no lib/modules/*/updates/clf.ko"
	modinfo -F name "$ko" | grep -qx clf || fail "$ko: not the clf module"
elif [ -f "$build/kernel/module/clf.ko" ]; then
	fail "clf.ko built, but no clf-modules package"
fi

# shellcheck disable=SC2086
dpkg_root --purge clf-server clf-client libclf-dev libclf0 \
	$( [ -n "$romiodir" ] && echo romio-clf ) $modules >"$tmp/dpkg.log" 2>&1 ||
	fail "dpkg --purge: $(cat "$tmp/dpkg.log")"
left=$(find "$root" \( -type f -o -type l \) ! -path "$root/var/lib/dpkg/*")
[ -z "$left" ] || fail "dpkg --purge left: $left"

echo "PASS: Debian packages"
