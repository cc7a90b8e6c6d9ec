#!/bin/sh
# Install the Debian packages clf needs to build and test, only those
# missing.  Root installs directly; anyone else goes through sudo.
set -e

PACKAGES="build-essential pkg-config check python3-kconfiglib clang
	libclang-rt-dev liblmdb-dev libinih-dev libsodium-dev
	libfuse3-dev fuse3 mpich libmpich-dev iproute2 zlib1g-dev file
	dpkg-dev sqlite3
	libhdf5-mpich-dev autoconf automake libtool munge libmunge-dev
	groff man-db debhelper lintian fakeroot systemd gnuplot-nox
	libibverbs-dev librdmacm-dev rdma-core ibverbs-providers ibverbs-utils
	rdmacm-utils perftest
	linux-image-amd64 linux-headers-amd64 qemu-system-x86 busybox-static
	cpio kmod slurmctld slurmd slurm-client"

missing=""
for p in $PACKAGES; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
		grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
	SUDO=""
else
	SUDO="sudo"
fi
echo "clf: installing missing packages:$missing"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing
