#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test_man.sh -- the manual pages (man/) render without a warning, from
# groff (-ww) and from man(1) at three widths, and cover what they
# document: every key of the configuration parser (libclf/runtime/config.c) in
# clf.conf(5), every clf command and long option (tools/) in clf(1), the
# options of metad and iod in theirs, the mount options in mount.clf(8)
# and every CLF_ function of include/clf.h in libclf(3), every clf_ll_
# function of libclf/client/clf_ll.h in clf_ll(3), every clf_ hint of
# the ROMIO driver in mpicc-clf(1).
#
# usage: test_man.sh      (from the source tree; exits 0 or 1)
set -eu

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

command -v groff >/dev/null || fail "groff not installed (scripts/install-deps.sh)"
command -v man >/dev/null || fail "man not installed (scripts/install-deps.sh)"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/clf-man-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

for page in man/clf.1 man/mpicc-clf.1 man/libclf.3 man/clf.conf.5 \
	man/metad.8 man/iod.8 man/clf_ll.3 \
	man/mount.clf.8; do
	[ -f "$page" ] || fail "$page missing"
	groff -ww -z -man "$page" >"$tmp/out" 2>&1 || fail "groff $page"
	[ ! -s "$tmp/out" ] || fail "groff -ww warns on $page: $(cat "$tmp/out")"
	for w in 60 80 132; do
		MANWIDTH=$w LC_ALL=C.UTF-8 man --warnings -l "$page" \
			>"$tmp/text" 2>"$tmp/out" || fail "man -l $page"
		[ ! -s "$tmp/out" ] ||
			fail "man --warnings, width $w, on $page: $(cat "$tmp/out")"
	done
	[ -s "$tmp/text" ] || fail "$page renders empty"
done

# covers PAGE WORD...: each WORD appears in PAGE's source (hyphens are
# written \- in roff).
covers() {
	page=$1
	shift
	sed 's/\\-/-/g; s/\\f[BIRP]//g' "$page" >"$tmp/src"
	for word in "$@"; do
		grep -qF -- "$word" "$tmp/src" || fail "$page does not mention '$word'"
	done
}

# The configuration keys: the parser's table of names.
keys=$(sed -n '/key_names\[K_NR\] = {/,/^};/p' libclf/runtime/config.c |
	grep -o '"[a-z_]*"' | tr -d '"')
[ -n "$keys" ] || fail "no keys found in libclf/runtime/config.c"
covers man/clf.conf.5 $keys iod '[global]' '[metad]' '[iod]' \
	/etc/clf/clf.conf CLF_CONFIG

# The clf commands (tools/clf.c's table) and every long option.
cmds=$(sed -n '/^static const struct tool_cmd commands/,/^};/p' tools/clf.c |
	grep -o '{ "[a-z]*"' | cut -d'"' -f2)
[ -n "$cmds" ] || fail "no commands found in tools/clf.c"
covers man/clf.1 $cmds
opts=$(cat tools/*.c | grep -o '{ "[a-z-]*", *\(required\|no\)_argument' |
	cut -d'"' -f2 | sort -u)
for o in $opts; do
	covers man/clf.1 "--$o"
done
covers man/clf.1 --pattern --stripe-size --stripe-count --first-iod \
	CLF_CONFIG CLF_DATA_DIR CLF_BASE_PORT /etc/clf/clf.conf

# The daemons' options.
for d in metad iod; do
	opts=$(grep -o '{ "[a-z-]*", *\(required\|no\)_argument' "$d/$d.c" |
		cut -d'"' -f2)
	[ -n "$opts" ] || fail "no options found in $d/$d.c"
	for o in $opts; do
		covers "man/$d.8" "--$o"
	done
done

# The mount options (kernel/clfs_opts.c) and the API.
covers man/mount.clf.8 config= secret_file= iods= cache=normal cache=none \
	allow_other debug log= foreground
funcs=$(grep -o '\bCLF_[A-Za-z_]*(' include/clf.h | tr -d '(' | sort -u)
covers man/libclf.3 $funcs

# The ROMIO driver's hints (ad_clf_hints.c's table) in mpicc-clf(1).
hints=$(sed -n '/ADIOI_CLF_Known_hints\[\] = {/,/};/p' \
	romio-clf/ad_clf/ad_clf_hints.c | grep -o '"clf_[a-z_]*"' | tr -d '"')
[ -n "$hints" ] || fail "no hints found in romio-clf/ad_clf/ad_clf_hints.c"
covers man/mpicc-clf.1 $hints use_romio_optimizations subfile_datatypes

# The in-tree low-level client API: every clf_ll_ call of clf_ll.h.
funcs=$(grep -o '\bclf_ll_[a-z_]*(' libclf/client/clf_ll.h | tr -d '(' | sort -u)
covers man/clf_ll.3 $funcs

echo "PASS: manual pages"
