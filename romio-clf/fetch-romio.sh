#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# fetch-romio.sh -- unpack the ROMIO sources of the installed MPICH.
#
# usage: fetch-romio.sh DESTDIR
#
# libromio-clf.so replaces the ROMIO compiled into Debian's libmpich, so it
# must be built from exactly the same ROMIO: the file error-handler calls
# stay in libmpich and read ROMIO's file structure.  We therefore take the
# source of the installed version from Debian's source package (apt-get
# source, with a deb-src entry mirroring the configured deb lines) and
# refuse any other version.
#
# DESTDIR/mpich-VERSION/src/mpi/romio is the result, with MPICH's MPI-IO
# tests beside it (test/mpi/io and the test/mpi/util, test/mpi/include
# they build with), which tests/integration/test_romio_suite.sh runs on
# clf; DESTDIR/.version records the Debian version once the tree is
# complete, so a second run is a no-op.  Exits 0 on success, 77 when the
# source cannot be obtained (the build then skips the driver and its
# tests), 1 on other errors.
set -eu

dest=${1:?usage: fetch-romio.sh DESTDIR}

ver=$(dpkg-query -W -f='${Version}' libmpich-dev 2>/dev/null || true)
if [ -z "$ver" ]; then
	echo "fetch-romio: libmpich-dev is not installed" >&2
	exit 77
fi
# Debian's binNMU suffix (+bN) has no source package of its own.
srcver=${ver%+b[0-9]*}
upver=${srcver#*:}
upver=${upver%-*}

# What we keep of the 440 MB tree (10 MB): the build tree is searched often.
keep="src/mpi/romio test/mpi/io test/mpi/util test/mpi/include"

complete=1
for d in $keep; do
	[ -d "$dest/mpich-$upver/$d" ] || complete=0
done
if [ -f "$dest/.version" ] && [ "$(cat "$dest/.version")" = "$srcver" ] &&
	[ "$complete" -eq 1 ]; then
	exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
	SUDO=""
else
	SUDO="sudo"
fi

# A deb-src entry for every configured Debian deb entry, once.
srclist=/etc/apt/sources.list.d/clf-deb-src.sources
if ! apt-get source --print-uris "mpich=$srcver" >/dev/null 2>&1; then
	tmp=$(mktemp)
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] && [ "$f" != "$srclist" ] || continue
		# deb822 stanzas: keep those of type deb, turned into deb-src.
		awk 'BEGIN { RS = ""; ORS = "\n\n" }
		     /(^|\n)Types:[^\n]*deb($|[ \n])/ && !/deb-src/ {
			sub(/Types:[^\n]*/, "Types: deb-src"); print }' "$f" >>"$tmp"
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		sed -n 's/^[[:space:]]*deb[[:space:]]\(.*debian.*\)$/Types: deb-src\nURIs: \1\n/p' \
			"$f" | awk '/^URIs:/ { n = split($0, w, " ");
				print "URIs: " w[2]; print "Suites: " w[3];
				c = ""; for (i = 4; i <= n; i++) c = c " " w[i];
				print "Components:" c; next } { print }' >>"$tmp"
	done
	if [ ! -s "$tmp" ]; then
		rm -f "$tmp"
		echo "fetch-romio: no Debian apt source to mirror as deb-src" >&2
		exit 77
	fi
	$SUDO install -m 0644 "$tmp" "$srclist"
	rm -f "$tmp"
	echo "fetch-romio: added $srclist; apt-get update" >&2
	$SUDO apt-get update -qq || true
fi

if ! command -v dpkg-source >/dev/null 2>&1; then
	echo "fetch-romio: dpkg-source missing (package dpkg-dev)" >&2
	exit 77
fi

rm -rf "$dest"
mkdir -p "$dest"
if ! (cd "$dest" && apt-get source -qq "mpich=$srcver" >fetch.log 2>&1); then
	echo "fetch-romio: apt-get source mpich=$srcver failed:" >&2
	cat "$dest/fetch.log" >&2
	exit 77
fi
for d in $keep; do
	if [ ! -d "$dest/mpich-$upver/$d" ]; then
		echo "fetch-romio: no $d in mpich $srcver" >&2
		exit 1
	fi
done
mv "$dest/mpich-$upver" "$dest/full.tmp"
rm -f "$dest"/mpich_*
for d in $keep; do
	mkdir -p "$dest/mpich-$upver/$(dirname "$d")"
	mv "$dest/full.tmp/$d" "$dest/mpich-$upver/$d"
done
rm -rf "$dest/full.tmp"
echo "$srcver" >"$dest/.version"
