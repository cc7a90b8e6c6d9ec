# SPDX-License-Identifier: LGPL-2.1-or-later
# installed_lib.sh -- sourced by test_install.sh (make install into a
# DESTDIR) and test_deb.sh (the .deb packages unpacked): checks that a
# tree of installed files works with nothing from the build tree.
#
# check_installed ROOT LIBDIR ROMIODIR
#   ROOT      the root the files were installed under
#   LIBDIR    libclf's directory under it (/usr/lib or the multiarch one)
#   ROMIODIR  libromio-clf.so's directory, or "" when ROMIO is not built
# The script sets $tmp (a scratch directory) and defines fail(), by
# installed_test_begin.  Uses instance_lib.sh's instance_up.
#
# installed_test_begin NAME BUILD_DIR
#   The start both tests share: sets build, tmp (a new scratch
#   directory), root ($tmp/root, where the files are installed) and
#   up=0 (the script sets it to 1 once an instance runs from $root,
#   with its data in $tmp/data); at exit stops that instance and removes
#   $tmp, on a signal exits 124; fail() prints "FAIL: NAME: ..." and
#   exits 1.
installed_test_begin() {
	_name=$1
	build=$2
	unset CLF_BIN_DIR CLF_CONFIG CLF_DATA_DIR CLF_BASE_PORT || true
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/clf-$_name-test.XXXXXX")
	root=$tmp/root
	up=0
	trap installed_cleanup EXIT
	trap 'exit 124' INT TERM HUP
}

installed_cleanup() {
	rc=$?
	trap - EXIT INT TERM HUP
	if [ "$up" = 1 ]; then
		"$root/usr/bin/clf" down --data "$tmp/data" >/dev/null 2>&1 || true
	fi
	rm -rf "$tmp"
	exit "$rc"
}

fail() {
	echo "FAIL: $_name: $*" >&2
	exit 1
}

# The test program: CLF_init(NULL) finds $CLF_CONFIG; a file is written
# through a view and read back.
write_prog() {
	cat >"$1" <<'PROG'
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <clf.h>
#include <clf_proto.h>

int main(void)
{
	char out[8192], in[8192];
	int fd;

	memset(out, 'x', sizeof(out));
	memcpy(out, "installed", 9);
	if (CLF_init(NULL) < 0 ||
	    (fd = CLF_open("/prog.dat", O_CREAT | O_RDWR, 0644)) < 0 ||
	    CLF_write(fd, out, sizeof(out)) != (ssize_t)sizeof(out) ||
	    CLF_lseek(fd, 0, SEEK_SET) != 0 ||
	    CLF_read(fd, in, sizeof(in)) != (ssize_t)sizeof(in) ||
	    CLF_close(fd) < 0) {
		fprintf(stderr, "%s\n", CLF_Last_error());
		return 1;
	}
	if (memcmp(in, out, sizeof(in))) {
		fprintf(stderr, "read back differs\n");
		return 1;
	}
	printf("ok %d\n", CLF_PROTO_VERSION_MAJOR);
	return CLF_finalize() < 0;
}
PROG
}

# no_build_path FILE: FILE names no directory of the build or source tree.
no_build_path() {
	if readelf -d "$1" 2>/dev/null | grep -Eq 'RUNPATH|RPATH'; then
		fail "$1 has a RUNPATH/RPATH: $(readelf -d "$1" | grep PATH)"
	fi
	# The source tree holds the build tree (build/ or O=), so one test
	# covers both; it must be set: an unset one made the check vanish.
	src=$(cd "$here/../.." && pwd)
	if LC_ALL=C ldd "$1" 2>/dev/null | grep -qF "$src/"; then
		fail "$1 loads a library from the source tree: $(ldd "$1")"
	fi
}

check_installed() {
	root=$1 libdir=$2 romiodir=$3
	lib=$root$libdir
	for f in usr/bin/clf usr/sbin/metad usr/sbin/iod sbin/mount.clf \
		usr/include/clf.h usr/include/clf_proto.h \
		usr/share/man/man1/clf.1 usr/share/man/man3/libclf.3 \
		usr/share/man/man5/clf.conf.5 usr/share/man/man8/metad.8 \
		usr/share/man/man8/iod.8 usr/share/man/man8/mount.clf.8; do
		[ -e "$root/$f" ] || [ -e "$root/$f.gz" ] || fail "no /$f installed"
	done
	[ "$(find "$root" -name 'clf-fuse*' | wc -l)" -eq 0 ] ||
		fail "the FUSE client is installed twice (clf-fuse)"
	[ -f "$lib/libclf.a" ] || fail "no $libdir/libclf.a"
	real=$(ls "$lib"/libclf.so.0.* 2>/dev/null | head -1)
	[ -f "$real" ] || fail "no $libdir/libclf.so.0.x"
	[ "$(readlink "$lib/libclf.so.0")" = "$(basename "$real")" ] ||
		fail "libclf.so.0 does not point to $(basename "$real")"
	[ "$(readlink "$lib/libclf.so")" = libclf.so.0 ] ||
		fail "libclf.so does not point to libclf.so.0"
	readelf -d "$real" | grep -q 'SONAME.*\[libclf.so.0\]' ||
		fail "$real: soname is not libclf.so.0"
	for f in usr/bin/clf usr/sbin/metad usr/sbin/iod sbin/mount.clf "$libdir/$(basename "$real")"; do
		no_build_path "$root/${f#/}"
	done

	# pkg-config, as a user would call it, rooted at $root.
	PKG_CONFIG_SYSROOT_DIR=$root PKG_CONFIG_PATH=$lib/pkgconfig
	export PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_PATH
	flags=$(pkg-config --cflags --libs clf) || fail "pkg-config clf"
	static=$(pkg-config --static --libs clf)
	for l in -lsodium -linih -lmunge -pthread; do
		case " $static " in *" $l "*) ;; *) fail "pkg-config --static lacks $l: $static" ;; esac
	done
	write_prog "$tmp/prog.c"
	# shellcheck disable=SC2086
	cc -o "$tmp/prog" "$tmp/prog.c" $flags ||
		fail "cc prog.c \$(pkg-config --cflags --libs clf)"
	LD_LIBRARY_PATH=$lib ldd "$tmp/prog" >"$tmp/ldd"
	grep -q "libclf.so.0 => $lib/libclf.so.0 " "$tmp/ldd" ||
		fail "prog does not load the installed libclf: $(cat "$tmp/ldd")"
	# Static: libclf.a and its Libs.private.
	# shellcheck disable=SC2086
	cc -o "$tmp/prog-static" "$tmp/prog.c" $(pkg-config --cflags clf) \
		"$lib/libclf.a" $(pkg-config --static --libs-only-other --libs-only-l clf | sed 's/-lclf //') ||
		fail "static link with pkg-config --static"
	unset PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_PATH

	# An instance from the installed programs only.
	PATH=$root/usr/bin:$root/usr/sbin:/usr/bin:/bin
	export PATH
	command -v clf | grep -q "^$root/" || fail "clf is not the installed one"
	instance_up clf "$tmp/data" "$tmp/up.log" --iods 2 ||
		fail "clf up from the installed files"
	up=1
	head -c 300000 /dev/urandom >"$tmp/in.bin"
	clf cp -q "$tmp/in.bin" clf:/in.bin -c "$tmp/data/clf.conf" ||
		fail "installed clf cp in"
	clf -c "$tmp/data/clf.conf" cp -q clf:/in.bin "$tmp/back.bin" ||
		fail "installed clf cp out"
	cmp -s "$tmp/in.bin" "$tmp/back.bin" || fail "clf cp: bytes differ"
	(cd "$tmp" && CLF_CONFIG=$tmp/data/clf.conf LD_LIBRARY_PATH=$lib \
		./prog) >"$tmp/prog.out" 2>&1 || fail "prog: $(cat "$tmp/prog.out")"
	(cd "$tmp" && CLF_CONFIG=$tmp/data/clf.conf ./prog-static) \
		>"$tmp/prog.out" 2>&1 || fail "prog-static: $(cat "$tmp/prog.out")"
	clf ls -l / -c "$tmp/data/clf.conf" | grep -q 'prog.dat' ||
		fail "clf ls does not show the program's file"

	# mpicc-clf finds the installed libromio-clf.so.
	if [ -n "$romiodir" ] && command -v mpicc >/dev/null; then
		[ -f "$root$romiodir/libromio-clf.so" ] ||
			fail "no $romiodir/libromio-clf.so"
		[ -e "$root/usr/share/man/man1/mpicc-clf.1" ] ||
			[ -e "$root/usr/share/man/man1/mpicc-clf.1.gz" ] ||
			fail "no mpicc-clf(1)"
		printf '#include <mpi.h>\nint main(int c, char **v) { MPI_Init(&c, &v); MPI_Finalize(); return 0; }\n' >"$tmp/mpi.c"
		env -u CLF_BUILD_DIR "$root/usr/bin/mpicc-clf" -o "$tmp/mpi" "$tmp/mpi.c" ||
			fail "mpicc-clf"
		ldd "$tmp/mpi" | grep -q "libromio-clf.so => $root$romiodir/" ||
			fail "mpicc-clf did not link the installed libromio-clf.so: $(ldd "$tmp/mpi")"
	fi
	clf down --data "$tmp/data" >/dev/null || fail "clf down"
	up=0
}
