#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# test_kclient.sh -- make check-kclient: kclient.sh (the kernel module
# and its daemon) in a qemu guest booting Debian's kernel.  Fails, not
# skips, when qemu, the kernel image or the module is missing: make deps
# installs them (scripts/install-deps.sh).
set -eu
build=$(cd "${1:-${CLF_BUILD_DIR:-build}}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
# slab_nomerge: the module's slab caches are its own, and their counts
# its objects (kclient.sh's leak checks).
CLF_GUEST_APPEND="slab_nomerge " exec "$here/run-guest.sh" --build "$build" \
	--out "$build/guest/kclient" --timeout 2400 "$here/kclient.sh" "$build"
