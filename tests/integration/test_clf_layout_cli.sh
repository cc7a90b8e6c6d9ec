#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test_clf_layout_cli.sh -- the file commands of the clf command line
# against a real instance on loopback: setlayout (files, directories,
# round robin options, the layout text, a non-empty file, a bad text),
# getlayout (the text round-trips, byte counts per subfile), mkdir, ls,
# cp (local -> clf -> local on a multi-MiB file, from clf on a file of
# several read-ahead chunks, clf -> clf with another
# layout, modes, directories, standard input and output), map (a view
# equal to a subfile is one run, byte counts, --png decoded), and every
# command once metad is stopped.
#
# usage: test_clf_layout_cli.sh [BUILD_DIR]   (default: $CLF_BUILD_DIR or build)
#
# Exits 0 on success, 1 on a failure, 77 when the daemons are not built.
# Everything runs in a fresh temporary directory on ports of its own
# derived from the shell's pid, under an overall time limit, and a trap
# stops the daemons and removes the directory whatever happens.

set -eu

TIME_LIMIT=240	# seconds, the whole test
if [ -z "${CLF_LAYOUT_CLI_TEST_TIMED:-}" ]; then
	CLF_LAYOUT_CLI_TEST_TIMED=1
	export CLF_LAYOUT_CLI_TEST_TIMED
	exec timeout -k 30 "$TIME_LIMIT" /bin/sh "$0" "$@"
fi

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
for t in python3 cmp file; do
	if ! command -v "$t" >/dev/null; then
		echo "FAIL: $t not installed (make deps)" >&2
		exit 1
	fi
done
unset CLF_BIN_DIR CLF_CONFIG CLF_DATA_DIR CLF_BASE_PORT || true
umask 022	# the modes of new files below

tmp=$(mktemp -d "${TMPDIR:-/tmp}/clf-layout-cli-test.XXXXXX")
a=$tmp/a	# the instance
loc=$tmp/local	# local files
mkdir "$loc"

cleanup() {
	rc=$?
	trap - EXIT INT TERM HUP
	if [ -f "$a/clf.conf" ] &&
		! "$clf" down --data "$a" >"$tmp/down" 2>&1; then
		echo "cleanup: clf down --data $a failed:" >&2
		cat "$tmp/down" >&2
	fi
	rm -rf "$tmp"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 124' INT TERM HUP

step=""

. "$(dirname "$0")/cli_lib.sh"

# c ARGS...: clf on the instance under test, through run.
c() {
	run "$clf" -c "$a/clf.conf" "$@"
}

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

# field FILE KEY N: field N of the line of FILE whose first field is KEY.
field() {
	awk -v k="$2" -v n="$3" '$1 == k { print $n; exit }' "$tmp/$1"
}

# ---------------------------------------------------------------------
step="an instance with 4 iods"
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
	# Another block than test_clf_cli.sh's for the same pid.
	base=$((lo + ($$ * 11 + 5000 + tries * 613) % span))
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
iod() {
	printf '127\\.0\\.0\\.1:%s' "$((base + 1 + $1))"
}

# ---------------------------------------------------------------------
step="setlayout --pattern creates the file; getlayout gives it back"
text='disp=100;vec(0,999,3000,1);vec(1000,2999,3000,1)'
c setlayout --pattern "$text" clf:/gen
expect_rc 0
c getlayout /gen
expect_rc 0
expect_line out "^layout $(printf '%s' "$text" | sed 's/[().;]/\\&/g')\$"
expect_line out '^disp +100$'
expect_line out '^size +0$'
expect_line out '^SUBFILE +IOD +ADDRESS +BYTES\* +TYPE$'
expect_line out "^head +0 +$(iod 0) +0 +-\$"
expect_line out "^0 +0 +$(iod 0) +0 +vec\\(0,999,3000,1\\)\$"
expect_line out "^1 +1 +$(iod 1) +0 +vec\\(1000,2999,3000,1\\)\$"
expect_line out '^\* computed from the file size'
# The text getlayout prints is a layout setlayout takes, and comes back
# the same; so are the types of its subfile lines.
back=$(sed -n 's/^layout //p' "$tmp/out")
t0=$(awk '$1 == "0" { print $5 }' "$tmp/out")
t1=$(awk '$1 == "1" { print $5 }' "$tmp/out")
c setlayout --pattern "$back" /gen2
expect_rc 0
c getlayout /gen2
expect_rc 0
[ "$(sed -n 's/^layout //p' "$tmp/out")" = "$back" ] ||
	fail "the layout text did not round-trip"
c setlayout --pattern "disp=100;$t0;$t1" /gen3
expect_rc 0
c getlayout /gen3
[ "$(sed -n 's/^layout //p' "$tmp/out")" = "$text" ] ||
	fail "the subfile types did not round-trip"

step="setlayout with round-robin options"
c setlayout --stripe-size 1m --stripe-count 2 --first-iod 3 /rr
expect_rc 0
c getlayout /rr
expect_line out '^layout rr:stripe=1m,count=2,first=3$'
expect_line out "^0 +3 +$(iod 3) +0 +vec\\(0,1m-1,2m,1\\)\$"
expect_line out "^1 +0 +$(iod 0) +0 +vec\\(1m,2m-1,2m,1\\)\$"
# What is left out comes from the configuration (64k x 4 from iod 0).
c setlayout --stripe-count 3 /rr3
expect_rc 0
c getlayout /rr3
expect_line out '^layout rr:stripe=64k,count=3$'
# cyclic on consecutive iods is written as the round robin it is.
c setlayout --pattern 'cyclic:k=4k,p=4' /cyc
c getlayout /cyc
expect_line out '^layout rr:stripe=4k,count=4$'
# The file is empty: the layout may change again.
c setlayout --pattern 'grid:rows=1k,cols=1k,p=2x2,k=64x64' /cyc
expect_rc 0
c getlayout /cyc
expect_line out '^layout grid:rows=1k,cols=1k,p=2x2,k=64x64$'

step="getlayout selectors (as lfs getstripe) and --json"
c getlayout --stripe-count /rr
expect_rc 0
[ "$(cat "$tmp/out")" = 2 ] || fail "-C: $(cat "$tmp/out")"
c getlayout -S /rr
[ "$(cat "$tmp/out")" = 1048576 ] || fail "-S: $(cat "$tmp/out")"
c getlayout -i /rr
[ "$(cat "$tmp/out")" = 3 ] || fail "-i: $(cat "$tmp/out")"
c getlayout -L -C -S -i /rr
[ "$(tr '\n' ' ' <"$tmp/out")" = "layout: rr:stripe=1m,count=2,first=3 stripe_count: 2 stripe_size: 1048576 stripe_index: 3 " ] ||
	fail "selectors: $(cat "$tmp/out")"
c getlayout -S /cyc
[ "$(cat "$tmp/out")" = - ] || fail "-S of a grid: $(cat "$tmp/out")"
c getlayout --json /rr
expect_rc 0
python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["layout"] == "rr:stripe=1m,count=2,first=3" and d["stripe_count"] == 2, d
assert d["stripe_size"] == 1048576 and d["stripe_index"] == 3, d
assert [(x["index"], x["iod"]) for x in d["subfiles"]] == [(0, 3), (1, 0)], d
' <"$tmp/out" || fail "getlayout --json"

step="setlayout refuses what is wrong"
printf 'twelve bytes' >"$loc/twelve"
c cp -q "$loc/twelve" clf:/full
expect_rc 0
c setlayout --stripe-count 2 /full
expect_rc 1
expect_line err "^clf: cannot set the layout of '/full': the file is not empty \\(12 bytes\\)\$"
c setlayout --pattern 'rr:stripe=64k,cont=4' /bad
expect_rc 2
expect_line err "^clf setlayout: bad --pattern: layout: at column 15: unknown field 'cont' for rr"
expect_line err '^  rr:stripe=64k,cont=4$'
expect_line err '^                \^$'
c setlayout --pattern 'grid:rows=1000,cols=1k,p=2x2,k=64x64' /bad
expect_rc 2
expect_line err "^clf setlayout: bad --pattern: layout: at column 1: grid: rows \(1000\) must be"
no_line err 'grid: grid:'
c setlayout --pattern 'vec(0,0,2,1)' /bad
expect_rc 2
expect_line err 'not a partitioning pattern'
c setlayout --pattern 'rr:stripe=1m,count=2,first=9' /bad
expect_rc 1
expect_line err "^clf: cannot set the layout of '/bad': the layout puts subfile 0 on iod 9; the configuration has iods 0 to 3\$"
c getlayout /bad
expect_rc 1
expect_line err "^clf: cannot get the layout of '/bad': no such file or directory\$"
c setlayout --default /nodir/f
expect_rc 1
expect_line err "^clf: cannot create '/nodir/f': no such directory '/nodir'\$"
c setlayout --pattern 'rr:stripe=1k,count=2' --stripe-count 2 /x
expect_rc 2
c setlayout --stripe-size 0 /x
expect_rc 2
c setlayout
expect_rc 2
c setlayout -d /full
expect_rc 1
expect_line err 'not a directory'

step="setlayout without a layout refuses, and keeps the file's"
c setlayout --stripe-size 8k --stripe-count 2 /keep
expect_rc 0
c setlayout /keep
expect_rc 2
expect_line err "^clf setlayout: which layout\? give --pattern .* or --default "
c getlayout /keep
expect_line out '^layout rr:stripe=8k,count=2$'
c setlayout --default --stripe-count 2 /keep
expect_rc 2

step="more subfiles than iods wants --force"
c setlayout --pattern 'rr:stripe=64k,count=400' /many
expect_rc 1
expect_line err "^clf: cannot set the layout of '/many': the layout has 400 subfiles and the instance 4 iods, so subfiles would share iods; give --force if that is meant\$"
c getlayout /many
expect_rc 1
c setlayout --force --stripe-count 6 /many
expect_rc 0
c getlayout /many
expect_line out '^layout rr:stripe=64k,count=6$'
c cp -q --stripe-count 5 "$loc/twelve" clf:/many5
expect_rc 1
expect_line err 'give --force'

step="cp into a missing directory DIR/ fails like cp(1)"
c cp -q "$loc/twelve" clf:/nodir/
expect_rc 1
expect_line err "^clf: cannot create 'clf:/nodir': not a directory\$"
c getlayout /nodir
expect_rc 1
c cp -q "$loc/twelve" clf:/full/
expect_rc 1
expect_line err 'not a directory'
# Local and clf reasons are written alike (lower case).
c cp -q "$loc/none" clf:/x
expect_rc 1
expect_line err "^clf: cannot open '$loc/none': no such file or directory\$"

step="cp keeps the layout from clf to clf (-p), or not"
c setlayout --pattern 'cyclic:k=8k,p=2' /lsrc
c cp -q "$loc/twelve" clf:/lsrc
expect_rc 0
c cp -q clf:/lsrc clf:/lcopy
expect_rc 0
c getlayout /lcopy
expect_line out '^layout rr:stripe=8k,count=2$'
c cp -q --no-preserve-layout clf:/lsrc clf:/lcopy2
c getlayout /lcopy2
expect_line out '^layout rr:stripe=64k,count=4$'
# An existing destination with data gets it too.
c cp -q -p clf:/lsrc clf:/lcopy2
expect_rc 0
c getlayout /lcopy2
expect_line out '^layout rr:stripe=8k,count=2$'
expect_line out '^size +12$'
c cp -q -p --stripe-count 2 clf:/lsrc clf:/lcopy3
expect_rc 2

step="a wrong secret is said once"
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$tmp/badsecret"
chmod 600 "$tmp/badsecret"
sed "s#^secret_file = .*#secret_file = $tmp/badsecret#" "$a/clf.conf" >"$tmp/bad.conf"
run "$clf" -c "$tmp/bad.conf" ls /
expect_rc 1
expect_line err "^clf: cannot list '/': metad \(127\.0\.0\.1:$base\): authentication failed: "
no_line err 'clf: .*clf: '

step="stat, mv, rm, rmdir without a mount"
c mkdir -p /tree/sub/deep
c setlayout --pattern 'rr:stripe=8k,count=2' /tree/sub
expect_rc 0
c cp -q "$loc/twelve" clf:/tree/sub/deep/f
c cp -q "$loc/twelve" clf:/tree/g
c stat /tree/g clf:/tree/sub
expect_rc 0
expect_line out '^  File: /tree/g$'
expect_line out '^  Size: 12 +Type: regular file$'
expect_line out "^  Mode: \(0644/-rw-r--r--\)  Uid: \($(id -u)/$(id -un)\)  Gid: \($(id -g)/$(id -gn)\)$"
expect_line out '^Layout: rr:stripe=64k,count=4$'
expect_line out '^  File: /tree/sub$'
expect_line out '^Layout: rr:stripe=8k,count=2$'
c stat /tree/none
expect_rc 1
expect_line err "^clf: cannot stat '/tree/none': no such file or directory$"
# mv renames; into a directory it keeps the name; the layout stays.
c mv /tree/sub/deep/f /tree/h
expect_rc 0
c mv /tree/h clf:/tree/sub
expect_rc 0
c getlayout /tree/sub/h
expect_rc 0
expect_line out '^size +12$'
c mv /tree/none /tree/x
expect_rc 1
expect_line err "^clf: cannot move '/tree/none'"
c mv /tree/g
expect_rc 2
# rm: files; -f for missing ones; -r for directories.
c rm /tree/g
expect_rc 0
c stat /tree/g
expect_rc 1
c rm /tree/g
expect_rc 1
expect_line err "^clf: cannot remove '/tree/g': no such file or directory$"
c rm -f /tree/g
expect_rc 0
c rm /tree/sub
expect_rc 1
expect_line err "^clf: cannot remove '/tree/sub': is a directory"
c rmdir /tree/sub
expect_rc 1
expect_line err "^clf: cannot remove '/tree/sub': directory not empty$"
# rmdir takes a directory whose only content is its default layout.
c rmdir /tree/sub/deep
expect_rc 0
c rm -r /tree
expect_rc 0
c stat /tree
expect_rc 1
c ls /
no_line out '^tree$'

step="cp -r copies directories, either way"
mkdir -p "$loc/tree/a/b"
printf 'one' >"$loc/tree/x"
printf 'two' >"$loc/tree/a/b/y"
c cp -q "$loc/tree" clf:/
expect_rc 1
expect_line err "^clf: -r not given; omitting directory '$loc/tree'\$"
c cp -q -r "$loc/tree" clf:/
expect_rc 0
c ls -a /tree/a/b
[ "$(cat "$tmp/out")" = y ] || fail "cp -r: $(cat "$tmp/out")"
c setlayout --pattern 'rr:stripe=8k,count=2' /tree/a
c cp -q -r clf:/tree clf:/tree2
expect_rc 0
c getlayout -L /tree2/a
[ "$(cat "$tmp/out")" = "rr:stripe=8k,count=2" ] ||
	fail "cp -r clf to clf lost a default layout: $(cat "$tmp/out")"
c cp -q -r clf:/tree2 "$loc/back"
expect_rc 0
diff -r "$loc/tree" "$loc/back" >"$tmp/out" 2>&1 || fail "cp -r back differs"
c rm -r /tree /tree2
expect_rc 0

step="--version"
run "$clf" --version
expect_rc 0
expect_line out '^clf [0-9]+\.[0-9]+\.[0-9]+$'
for p in metad/metad iod/iod kernel/mount.clf; do
	[ -x "$build/$p" ] || continue
	run "$build/$p" --version
	expect_rc 0
	expect_line out "^${p##*/} \(clf\) [0-9]+\.[0-9]+\.[0-9]+\$"
done

step="directories: mkdir, default layouts, ls"
c mkdir /d
expect_rc 0
c getlayout /d
expect_rc 0
expect_line out '^default none \(new files get the configuration.s rr:stripe=64k,count=4\)$'
c setlayout --pattern 'rr:stripe=8k,count=2,first=1' clf:/d
expect_rc 0
c getlayout /d
expect_line out '^default rr:stripe=8k,count=2,first=1$'
# A file created in it gets it, a subdirectory inherits it.
c setlayout --default /d/f
expect_rc 0	# the configuration's round robin
c cp -q "$loc/twelve" clf:/d/
expect_rc 0
c getlayout /d/twelve
expect_line out '^layout rr:stripe=8k,count=2,first=1$'
c mkdir -p /d/sub/deeper
expect_rc 0
c getlayout /d/sub/deeper
expect_line out '^default rr:stripe=8k,count=2,first=1$'
c ls /d
expect_rc 0
[ "$(tr '\n' ' ' <"$tmp/out")" = "f sub twelve " ] ||
	fail "ls /d: $(cat "$tmp/out")"
c ls -a clf:/d
expect_line out '^\.clf-default-layout$'
c ls -l /d
expect_rc 0
# Owner and group as ls(1) shows them.
me=$(id -un)
grp=$(id -gn)
expect_line out "^-rw-r--r-- +$me +$grp +12 +[0-9-]+ [0-9:]+ rr:stripe=8k,count=2,first=1 +twelve\$"
expect_line out "^d[rwx-]{9} +$me +$grp +[0-9]+ +[0-9-]+ [0-9:]+ rr:stripe=8k,count=2,first=1 +sub\$"
expect_line out '^-[rw-]{9} .* 0 .* rr:stripe=64k,count=4 +f$'
c ls -l /gen
expect_line out '^-[rw-]{9} .* 0 .* disp=100;vec\(0,999,3000,1\);vec\(1000,2\.\.\. +/gen$'
c setlayout -d /d
expect_rc 0
c getlayout /d
expect_line out '^default none'
c ls /nope
expect_rc 1
expect_line err "^clf: cannot list '/nope': no such file or directory\$"
c mkdir /d
expect_rc 1
expect_line err "^clf: cannot make directory '/d': file exists\$"

step="cp local -> clf -> local, several MiB"
size=$((6 * 1048576 + 12345))
head -c "$size" /dev/urandom >"$loc/big"
chmod 640 "$loc/big"
c cp --stripe-size 1m --stripe-count 4 "$loc/big" clf:/big
expect_rc 0
expect_line out "^$loc/big -> clf:/big: $size bytes in [0-9.]+ s\$"
no_line err '.'		# no progress bar: stderr is not a terminal
c cp clf:/big "$loc/big.back"
expect_rc 0
cmp "$loc/big" "$loc/big.back" || fail "the bytes differ"
[ "$(stat -c %a "$loc/big.back")" = 640 ] || fail "mode not kept locally"
c ls -l /big
expect_line out "^-rw-r----- +[^ ]+ +[^ ]+ +$size .* rr:stripe=1m,count=4 +/big\$"
c ls -lh /big
expect_line out "^-rw-r----- +[^ ]+ +[^ ]+ +6\\.0M .* /big\$"
c ls --json /big
python3 -c 'import json,sys; e = json.load(sys.stdin)[0]; assert e["size"] == int(sys.argv[1]) and e["layout"] == "rr:stripe=1m,count=4", e' "$size" <"$tmp/out" ||
	fail "ls --json"
# Where the bytes are: 6 MiB + 12345 over 1 MiB stripes on 4 subfiles,
# stripes 0 to 6 on subfiles 0 1 2 3 0 1 2.
c getlayout /big
expect_line out "^size +$size\$"
[ "$(field out 0 4)" = $((2 * 1048576)) ] || fail "subfile 0 bytes"
[ "$(field out 1 4)" = $((2 * 1048576)) ] || fail "subfile 1 bytes"
[ "$(field out 2 4)" = $((1048576 + 12345)) ] || fail "subfile 2 bytes"
[ "$(field out 3 4)" = 1048576 ] || fail "subfile 3 bytes"
expect_line out "\\($size bytes in all\\)"

# On a terminal (script(1) gives one, where installed): a progress bar.
if command -v script >/dev/null && script -qc true /dev/null >/dev/null 2>&1
then
	run script -qc "'$clf' -c '$a/clf.conf' cp clf:/big '$loc/big.tty'" \
		/dev/null
	expect_rc 0
	expect_line out '100% \[#+\] '
	cmp "$loc/big" "$loc/big.tty" || fail "the bytes differ (terminal)"
fi

# More than two of the chunks `clf cp` reads ahead from clf (16 MiB, on
# connections of their own, tools/cp_ahead.c), the last one short: the
# chunks are put back in file order, to a file and to standard output.
step="cp from clf, reading ahead, several chunks"
size3=$((40 * 1048576 + 4321))
head -c "$size3" /dev/urandom >"$loc/three"
c cp -q --stripe-size 1m --stripe-count 3 "$loc/three" clf:/three
expect_rc 0
c cp clf:/three "$loc/three.back"
expect_rc 0
expect_line out "^clf:/three -> $loc/three.back: $size3 bytes in [0-9.]+ s\$"
cmp "$loc/three" "$loc/three.back" || fail "the bytes differ (read ahead)"
run sh -c "'$clf' -c '$a/clf.conf' cp -q clf:/three - | cmp - '$loc/three'"
expect_rc 0
rm -f "$loc/three" "$loc/three.back"

step="cp clf -> clf with another layout, over a file, into a directory"
c cp -q --pattern 'cyclic:k=4k,p=3' clf:/big clf:/big2
expect_rc 0
c getlayout /big2
expect_line out '^layout rr:stripe=4k,count=3$'
c cp -q clf:/big2 "$loc/big2"
cmp "$loc/big" "$loc/big2" || fail "clf -> clf changed the bytes"
[ "$(stat -c %a "$loc/big2")" = 640 ] || fail "mode not kept clf -> clf"
# Over an existing, longer file: emptied first, layout changed.
c cp -q --stripe-size 16k --stripe-count 2 "$loc/twelve" clf:/big2
expect_rc 0
c cp -q clf:/big2 "$loc/twelve.back"
cmp "$loc/twelve" "$loc/twelve.back" || fail "overwrite left old bytes"
c getlayout /big2
expect_line out '^layout rr:stripe=16k,count=2$'
mkdir "$loc/into"
c cp -q clf:/big "$loc/into"
expect_rc 0
cmp "$loc/big" "$loc/into/big" || fail "into a local directory"
# Standard input and output.
c cp -q - clf:/piped <"$loc/big"
expect_rc 0
run sh -c "'$clf' -c '$a/clf.conf' cp clf:/piped - >'$loc/piped'"
expect_rc 0
cmp "$loc/big" "$loc/piped" || fail "through stdin and stdout"
expect_line err "^clf:/piped -> -: $size bytes"
c cp clf:/big clf:/big
expect_rc 1
expect_line err "^clf: cannot create 'clf:/big': it is the source\$"
c cp clf:/nope "$loc/x"
expect_rc 1
expect_line err "^clf: cannot open 'clf:/nope': no such file or directory\$"
[ ! -e "$loc/x" ] || fail "a failed copy left a file"
c cp "$loc/nope" clf:/x
expect_rc 1
expect_line err "^clf: cannot open '$loc/nope': "
c cp "$loc/big" clf:/nodir/x
expect_rc 1
expect_line err "^clf: cannot create 'clf:/nodir/x': no such directory '/nodir'\$"
c cp "$loc/big" "$loc/big3"
expect_rc 2
c cp --stripe-count 2 clf:/big "$loc/big3"
expect_rc 2
c cp clf:/big
expect_rc 2

step="map: a view equal to a subfile is one run"
head -c 65536 /dev/urandom >"$loc/64k"
c setlayout --pattern 'cyclic:k=64,p=4' /m
c cp -q "$loc/64k" clf:/m
c map /m --view 'cyclic:k=64,p=4,part=2'
expect_rc 0
expect_line out '^view +cyclic:k=64,p=4,part=2 = vec\(128,191,256,1\), disp 0: 64 of every 256 bytes$'
expect_line out '^range +view bytes 0:16384 \(the view.s bytes below the file size\)$'
expect_line out '^SUBFILE +IOD +BYTES +RUNS +CONTIGUOUS$'
expect_line out '^2 +2 +16384 +1 +yes$'
for j in 0 1 3; do
	expect_line out "^$j +$j +0 +0 +-\$"
done
expect_line out '^total +16384 +1$'
expect_line out '^2 +0 +0 +16384$'
# Two subfiles, 256 runs each; a range; runs listed with a bound.
c map clf:/m --view 'vec(0,127,256,1)' --runs 2
expect_rc 0
expect_line out '^0 +0 +16384 +256 +no$'
expect_line out '^1 +1 +16384 +256 +no$'
expect_line out '^2 +2 +0 +0 +-$'
expect_line out '^total +32768 +512$'
expect_line out '^0 +128 +64 +64$'
expect_line out '^0 +\(254 more\)$'
c map /m --view 'cyclic:k=64,p=4,part=1' --range 100:1100 --runs 0
expect_line out '^1 +1 +1000 +1 +yes$'
no_line out 'VIEW_OFF'
# A displacement, for the view and for the layout (--layout: no file).
c map --layout 'disp=100;rr:stripe=1k,count=3' --view 'vec(0,99,200,1)'
expect_rc 0
expect_line out '^head +- +100 +1 +yes$'
expect_line out '^total +38500 +421$'
c map /m --view 'vec(0,0,2 1)'
expect_rc 2
expect_line err '^clf map: bad --view: type: at column 11: expected .,. after the stride'
c map /m --view 'cyclic:k=64,p=4'
expect_rc 2
expect_line err 'cyclic needs part='
c map /m
expect_rc 2
c map /nope --view byte
expect_rc 1
expect_line err "^clf: cannot get the layout of '/nope': no such file or directory\$"

step="map --png writes a PNG"
c map /cyc --view 'grid:rows=1k,cols=1k,p=1x4,k=1kx256,part=1' \
	--png "$tmp/map.png" --png-row 1k
expect_rc 0
expect_line out "^png +$tmp/map\\.png: [0-9]+x[0-9]+ pixels"
[ "$(head -c 8 "$tmp/map.png" | od -An -tx1 | tr -d ' \n')" = \
	89504e470d0a1a0a ] || fail "no PNG signature"
file "$tmp/map.png" | grep -q 'PNG image data, [0-9]* x [0-9]*, 8-bit/color RGB' ||
	fail "file(1) says: $(file "$tmp/map.png")"
python3 - "$tmp/map.png" <<'EOF' || fail "the PNG does not decode"
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n"
pos, idat, w = 8, b"", None
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    crc, = struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])
    assert zlib.crc32(kind + body) == crc, kind
    if kind == b"IHDR":
        w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
        assert (depth, ctype) == (8, 2)
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
raw = zlib.decompress(idat)
assert len(raw) == h * (1 + 3 * w), (len(raw), w, h)
# A view column in full colour and the rest pale: several colours.
row = raw[(h // 2) * (1 + 3 * w):(h // 2 + 1) * (1 + 3 * w)]
assert len(set(row[1 + 3 * i:4 + 3 * i] for i in range(w))) >= 4
EOF
c map /m --view byte --png "$tmp/nodir/x.png"
expect_rc 1
expect_line err "^clf: cannot create '$tmp/nodir/x\\.png': no such file or directory\$"
# Said before the table, not after it.
[ ! -s "$tmp/out" ] || fail "a table before the --png error"
# A narrow --png-row gives a picture of sane proportions.
c map /cyc --view byte --png "$tmp/narrow.png" --png-row 7
expect_rc 0
python3 - "$tmp/narrow.png" <<'EOF' || fail "--png-row 7: $(file "$tmp/narrow.png")"
import struct, sys
w, h = struct.unpack(">II", open(sys.argv[1], "rb").read()[16:24])
assert w >= 200 and h <= 1400 and h <= 4 * w, (w, h)
EOF

step="help and usage of every file command"
for cmd in setlayout getlayout map cp ls mkdir rm rmdir mv stat; do
	c "$cmd" --help
	expect_rc 0
	expect_line out "^usage: clf .*$cmd"
	c "$cmd" --bogus
	expect_rc 2
	expect_line err "unknown option '--bogus'"
done
c getlayout
expect_rc 2
c getlayout /a /b
expect_rc 2

step="every command once metad is stopped"
"$clf" down --data "$a" >/dev/null
# No wait for a restart (test_cli_recovery.sh waits): fail at once.
sed -i 's/^\[global\]$/[global]\nrecovery_grace_s = 0/' "$a/clf.conf"
down="metad \\(127\\.0\\.0\\.1:$base\\): down"
c getlayout /big
expect_rc 1
expect_line err "^clf: cannot get the layout of '/big': $down"
c setlayout --stripe-count 2 /new
expect_rc 1
expect_line err "^clf: cannot set the layout of '/new': $down"
c ls -l /
expect_rc 1
expect_line err "^clf: cannot list '/': $down"
c cp clf:/big "$loc/x"
expect_rc 1
expect_line err "^clf: cannot open 'clf:/big': $down"
c cp "$loc/big" clf:/x
expect_rc 1
expect_line err "^clf: cannot create 'clf:/x': $down"
c map /m --view byte
expect_rc 1
expect_line err "^clf: cannot get the layout of '/m': $down"
c mkdir /e
expect_rc 1
expect_line err "^clf: cannot make directory '/e': $down"
# A layout alone needs no instance.
c map --layout 'rr:stripe=64k,count=4' --view 'rr:stripe=64k,count=4,part=0'
expect_rc 0
expect_line out '^0 +- +65536 +1 +yes$'

echo "PASS: clf file commands"
