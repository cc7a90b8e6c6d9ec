#!/bin/sh
# run.sh -- boot Debian's kernel in qemu with this machine's root over 9p
# (read-only) and run a test script inside it (docs: ../../shared
# GUEST.md's recipe; tests/guest/README).
#
#   tests/guest/run.sh [--build DIR] [--timeout S] SCRIPT [ARGS...]
#
# SCRIPT (a path on this machine) runs as root in the guest after
# switch_root into the host's /, with /proc, /sys, /dev, /tmp and /run
# mounted and $GUEST_OUT a directory shared read-write with this side.
# Its exit status is the run's: the guest reports it through qemu's
# isa-debug-exit (byte 0 -> qemu exits 1 = pass, byte 1 -> 3 = fail);
# anything else -- a panic, a timeout, qemu missing -- fails loudly.
# The guest's console goes to $BUILD/guest/console.log and, on failure,
# to stderr.  TCG unless GUEST_ACCEL=kvm.
set -eu

BUILD=build
TIMEOUT=240
while [ $# -gt 0 ]; do
	case $1 in
	--build) BUILD=$2; shift 2 ;;
	--timeout) TIMEOUT=$2; shift 2 ;;
	*) break ;;
	esac
done
[ $# -ge 1 ] || { echo "usage: $0 [--build DIR] [--timeout S] SCRIPT [ARGS...]" >&2; exit 2; }
SCRIPT=$(readlink -f "$1"); shift

fail() { echo "FAIL: guest: $*" >&2; exit 1; }

QEMU=$(command -v qemu-system-x86_64 || true)
[ -n "$QEMU" ] || fail "qemu-system-x86_64 is not installed (make deps installs qemu-system-x86)"
BUSYBOX=/bin/busybox
[ -x "$BUSYBOX" ] && "$BUSYBOX" --list 2>/dev/null | grep -qx switch_root ||
	fail "no static busybox at $BUSYBOX (make deps installs busybox-static)"
KIMG=$(ls /boot/vmlinuz-* 2>/dev/null | sort -V | tail -1)
[ -n "$KIMG" ] || fail "no kernel image in /boot (make deps installs linux-image-amd64)"
KVER=${KIMG#/boot/vmlinuz-}
[ -d "/lib/modules/$KVER" ] || fail "no modules for $KVER in /lib/modules"

WORK=$(readlink -f "$BUILD")/guest
mkdir -p "$WORK"

# The ELF inside the XZ image boots 2-3 times faster under TCG (its PVH
# note lets qemu load it directly); extracted once per kernel.
VMLINUX=$WORK/vmlinux-$KVER
if [ ! -s "$VMLINUX" ]; then
	off=$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$KIMG" | head -1 | cut -d: -f1)
	[ -n "$off" ] || fail "$KIMG: no XZ payload"
	tail -c +$((off + 1)) "$KIMG" | xz -dc > "$VMLINUX.tmp" 2>/dev/null || true
	[ -s "$VMLINUX.tmp" ] || fail "$KIMG: cannot extract vmlinux"
	mv "$VMLINUX.tmp" "$VMLINUX"
fi

# Stage 1: busybox and the modules that mount the host's root over 9p.
modpath() { modinfo -k "$KVER" -n "$1"; }
moddeps() {
	for d in $(modinfo -k "$KVER" -F depends "$1" | tr ',' ' '); do
		moddeps "$d"
	done
	echo "$1"
}
INITRD=$WORK/stage1-$KVER.cpio.gz
if [ ! -s "$INITRD" ] || [ "$0" -nt "$INITRD" ]; then
	S1=$(mktemp -d "$WORK/stage1.XXXXXX")
	mkdir -p "$S1/bin" "$S1/lib/modules" "$S1/proc" "$S1/sys" "$S1/dev" \
		"$S1/newroot"
	cp "$BUSYBOX" "$S1/bin/busybox"
	for m in $( (moddeps virtio_pci; moddeps 9pnet_virtio; moddeps 9p) |
		    awk '!seen[$0]++'); do
		f=$(modpath "$m")
		case $f in
		*.ko.xz) xz -dc "$f" > "$S1/lib/modules/$m.ko" ;;
		*.ko.zst) zstd -qdc "$f" > "$S1/lib/modules/$m.ko" ;;
		*.ko) cp "$f" "$S1/lib/modules/$m.ko" ;;
		*) ;;	# built in
		esac
		[ -f "$S1/lib/modules/$m.ko" ] && echo "$m" >> "$S1/lib/modules/order"
	done
	cat > "$S1/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t devtmpfs dev /dev
for m in $(/bin/busybox cat /lib/modules/order); do
	/bin/busybox insmod /lib/modules/$m.ko || echo "stage1: insmod $m failed"
done
set -- $(/bin/busybox cat /proc/cmdline)
for a; do case $a in clf.out=*) OUT=${a#clf.out=} ;; clf.script=*) SCRIPT=${a#clf.script=} ;; esac; done
O9="trans=virtio,version=9p2000.L,msize=262144"
/bin/busybox mount -t 9p -o ro,$O9,cache=loose hostroot /newroot ||
	/bin/busybox mount -t 9p -o ro,$O9 hostroot /newroot || { echo "stage1: no host root"; /bin/busybox poweroff -f; }
/bin/busybox mount -t 9p -o $O9 work /newroot$OUT || echo "stage1: no scratch"
/bin/busybox umount /proc /dev
exec /bin/busybox switch_root /newroot /bin/sh -c "
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp; mount -t tmpfs run /run
export GUEST_OUT=$OUT PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/tmp
cd $OUT/cwd 2>/dev/null || cd /
sh $OUT/script.sh > $OUT/script.log 2>&1; rc=\$?
echo \"guest: script exited \$rc\"
if [ \$rc -eq 0 ]; then printf '\000'; else printf '\001'; fi |
	dd of=/dev/port bs=1 seek=244 count=1 2>/dev/null
echo 'guest: isa-debug-exit did not stop qemu'; sync; echo o > /proc/sysrq-trigger"
INIT
	chmod +x "$S1/init"
	(cd "$S1" && find . | cpio -o -H newc --quiet | gzip -1) > "$INITRD.tmp"
	mv "$INITRD.tmp" "$INITRD"
	rm -rf "$S1"
fi

# The scratch directory, shared read-write: the script, its log, results.
rm -rf "$WORK"/run.*	# a failed run's, kept for a look until the next
OUT=$(mktemp -d "$WORK/run.XXXXXX")
chmod 755 "$OUT"
{
	echo "#!/bin/sh"
	echo "cd '$(pwd)'"
	printf 'exec sh %s' "'$SCRIPT'"
	for a; do printf " '%s'" "$a"; done
	echo
} > "$OUT/script.sh"

run_qemu() {
	timeout -k 5 "$TIMEOUT" "$QEMU" -accel "$1" -m 1024 -smp 2 \
		-nographic -no-reboot -nodefaults -serial stdio \
		-kernel "$VMLINUX" -initrd "$INITRD" \
		-append "console=ttyS0 panic=-1 quiet clf.out=$OUT" \
		-device isa-debug-exit,iobase=0xf4,iosize=0x04 \
		-fsdev local,id=r,path=/,security_model=none,readonly=on,multidevs=remap \
		-device virtio-9p-pci,fsdev=r,mount_tag=hostroot \
		-fsdev local,id=w,path="$OUT",security_model=none,multidevs=remap \
		-device virtio-9p-pci,fsdev=w,mount_tag=work \
		< /dev/null > "$WORK/console.log" 2>&1
}

start=$(date +%s)
rc=0
# TCG: with the host's /dev/kvm a stock guest kernel hangs before its
# first console line here (tried: it waits out the timeout), so KVM is
# only for GUEST_ACCEL=kvm on machines where it works.
run_qemu "${GUEST_ACCEL:-tcg}" || rc=$?
end=$(date +%s)
cat "$OUT/script.log" 2>/dev/null || true
echo "guest: $((end - start)) s, qemu status $rc"
case $rc in
1) rm -rf "$OUT"; exit 0 ;;
3) fail "the test script failed (log above; console $WORK/console.log)" ;;
124|137) tail -30 "$WORK/console.log" >&2; fail "timed out after $TIMEOUT s" ;;
*) tail -30 "$WORK/console.log" >&2; fail "qemu exited $rc (console above)" ;;
esac
