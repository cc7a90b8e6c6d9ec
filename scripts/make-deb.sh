#!/bin/sh
# make-deb.sh BUILD_DIR -- the Debian packages of clf into BUILD_DIR/deb
# (run by `make deb`, debian/Build.mk).
#
# debian/rules builds in BUILD_DIR/deb/build with Debian's build flags;
# ROMIO (MPICH's sources, configured and compiled by build-romio.sh) is
# copied from BUILD_DIR rather than fetched and built again.  Without a
# libromio-clf.so in BUILD_DIR, romio-clf is left out.
set -eu

o=${1:?usage: make-deb.sh BUILD_DIR}
out=$o/deb
bo=$out/build
mkdir -p "$bo"
for d in romio romio-src; do
	if [ -d "$o/$d" ] && [ ! -e "$bo/$d" ]; then
		cp -a "$o/$d" "$bo/$d"
	fi
done
DH_OPTIONS=
if [ ! -f "$o/romio-clf/libromio-clf.so" ]; then
	DH_OPTIONS="-Nromio-clf"
	echo "make-deb: no libromio-clf.so in $o: romio-clf left out"
fi
if [ ! -f "$o/kernel/module/clf.ko" ]; then
	DH_OPTIONS="$DH_OPTIONS -Nclf-modules"
	echo "make-deb: no clf.ko in $o (linux-headers): clf-modules left out"
fi
export DH_OPTIONS
# No -dbgsym packages: the tests and users want the five.
DEB_BUILD_OPTIONS="${DEB_BUILD_OPTIONS:-} noddebs"
export DEB_BUILD_OPTIONS
rm -f "$out"/*.deb
echo "make-deb: debian/rules binary (log: $out/build.log)"
if ! CLF_DEB_O=$bo CLF_DEB_OUT=$out debian/rules binary \
	>"$out/build.log" 2>&1; then
	tail -40 "$out/build.log" >&2
	echo "make-deb: debian/rules binary failed (log: $out/build.log)" >&2
	exit 1
fi
ls "$out"/*.deb
