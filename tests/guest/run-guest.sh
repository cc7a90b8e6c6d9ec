#!/bin/sh
# run-guest.sh -- run a test script inside a qemu guest booting Debian's
# kernel (docs: ../../../shared/GUEST.md, the same recipe):
#
#   tests/guest/run-guest.sh [--build DIR] [--out DIR] [--timeout S] SCRIPT [ARGS]
#
# The guest mounts the host's / read-only over 9p and switch_roots into
# it, so it runs the host's kmod, mount, fuse3 and this tree's binaries
# as they are; /tmp and /run are tmpfs, and --out DIR (default
# BUILD/guest/out) is the guest's /mnt, written through.  SCRIPT runs as
# root; its exit status becomes qemu's through isa-debug-exit: 0 -> 3,
# else 1.  Anything else (a panic, a timeout) fails.
#
# The kernel is /boot/vmlinuz-KVER (KVER: the newest installed Debian
# image, or $KVER); its ELF is extracted once into BUILD/guest, where the
# stage-1 initramfs (busybox-static, the virtio and 9p modules) is
# built too.  Fails loudly when qemu, busybox or the kernel is missing.
set -eu

build=build
out=
tmo=300
while [ $# -gt 0 ]; do
	case "$1" in
	--build) build=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--timeout) tmo=$2; shift 2 ;;
	*) break ;;
	esac
done
[ $# -ge 1 ] || { echo "usage: $0 [--build DIR] [--out DIR] SCRIPT [ARGS]" >&2; exit 2; }
script=$(realpath "$1")
shift
here=$(dirname "$(realpath "$0")")
gdir=$(realpath -m "$build/guest")
out=$(realpath -m "${out:-$gdir/out}")
mkdir -p "$gdir" "$out"

die() { echo "run-guest: $*" >&2; exit 1; }

command -v qemu-system-x86_64 >/dev/null ||
	die "qemu-system-x86_64 is missing (scripts/install-deps.sh installs qemu-system-x86)"
[ -x /bin/busybox ] || die "/bin/busybox is missing (busybox-static)"
if [ -z "${KVER:-}" ]; then
	KVER=$(ls /boot | sed -n 's/^vmlinuz-\(.*-amd64\)$/\1/p' | sort -V | tail -n 1)
fi
[ -n "$KVER" ] && [ -f "/boot/vmlinuz-$KVER" ] ||
	die "no Debian kernel image in /boot (linux-image-amd64)"
[ -d "/lib/modules/$KVER" ] || die "/lib/modules/$KVER is missing"

# The ELF inside the XZ-compressed bzImage boots through its PVH note,
# without the seconds of decompression under TCG.
vmlinux=$gdir/vmlinux-$KVER
if [ ! -s "$vmlinux" ] || [ "/boot/vmlinuz-$KVER" -nt "$vmlinux" ]; then
	off=$(python3 -c 'import sys; print(open(sys.argv[1], "rb").read().find(b"\xfd7zXZ\0"))' "/boot/vmlinuz-$KVER")
	[ "$off" != -1 ] || off=
	[ -n "$off" ] || die "no XZ stream in /boot/vmlinuz-$KVER"
	tail -c +"$((off + 1))" "/boot/vmlinuz-$KVER" | xz -dc > "$vmlinux.tmp" 2>/dev/null || true
	[ -s "$vmlinux.tmp" ] || die "cannot extract the kernel of /boot/vmlinuz-$KVER"
	mv "$vmlinux.tmp" "$vmlinux"
fi

# CLF_GUEST_APPEND: more of the kernel's command line ("WORD ... ").
# Stage 1: busybox, the modules to mount 9p, an init that switch_roots.
stage1=$gdir/stage1-$KVER.cpio.gz
if [ ! -s "$stage1" ] || [ "$here/stage1-init" -nt "$stage1" ]; then
	s=$gdir/stage1
	rm -rf "$s"
	mkdir -p "$s/bin" "$s/mod" "$s/proc" "$s/sys" "$s/dev" "$s/newroot"
	cp /bin/busybox "$s/bin/busybox"
	cp "$here/stage1-init" "$s/init"
	: > "$s/modules"
	add_mod() {
		for d in $(modinfo -k "$KVER" -F depends "$1" | tr ',' ' '); do
			add_mod "$d"
		done
		f=$(modinfo -k "$KVER" -n "$1")
		case "$f" in /*) ;; *) return ;; esac
		grep -qx "$1" "$s/modules" && return
		case "$f" in
		*.xz) xz -dc "$f" > "$s/mod/$1.ko" ;;
		*) cp "$f" "$s/mod/$1.ko" ;;
		esac
		echo "$1" >> "$s/modules"
	}
	for m in virtio_pci 9pnet_virtio 9p; do
		add_mod $m
	done
	(cd "$s" && find . | cpio -o -H newc --quiet | gzip -1) > "$stage1.tmp"
	mv "$stage1.tmp" "$stage1"
fi

# TCG: /dev/kvm exists on these machines, but a guest under it stops
# at its first locked cmpxchg16b ("emulation failure", measured), and
# qemu then hangs instead of exiting.  CLF_GUEST_KVM=1 tries it.
accel="-accel tcg"
if [ -n "${CLF_GUEST_KVM:-}" ]; then
	accel="-accel kvm -accel tcg"
fi
log=$out/console.log
# no_timer_check: on a loaded host, TCG can be too slow for the boot's
# check of the IO-APIC timer, which then panics ("IO-APIC + timer
# doesn't work", seen under load 16); qemu's timer is fine.
set +e
# shellcheck disable=SC2086
timeout -k 5 "$tmo" qemu-system-x86_64 $accel -m 1024 -smp 2 -nographic \
	-no-reboot -nodefaults -serial stdio \
	-kernel "$vmlinux" -initrd "$stage1" \
	-append "console=ttyS0 panic=-1 quiet no_timer_check ${CLF_GUEST_APPEND:-}clfinit=$here/guest-init.sh clftest=$script clfargs=$(echo "$*" | tr ' ' ',')" \
	-device isa-debug-exit,iobase=0xf4,iosize=0x04 \
	-fsdev local,id=r,path=/,security_model=none,readonly=on,multidevs=remap \
	-device virtio-9p-pci,fsdev=r,mount_tag=hostroot \
	-fsdev local,id=w,path="$out",security_model=none,multidevs=remap \
	-device virtio-9p-pci,fsdev=w,mount_tag=work \
	< /dev/null > "$log" 2>&1
rc=$?
set -e
tr -d '\r' < "$log"
case $rc in
3) exit 0 ;;
1) die "the guest test failed (console: $log)" ;;
124|137) die "the guest ran past ${tmo}s (console: $log)" ;;
*) die "qemu ended with status $rc: a panic or no guest (console: $log)" ;;
esac
