# Integration test of the mount client (kernel/, CONFIG_CLF_FUSE):
# tests/integration/test_mount.sh mounts a real instance through FUSE
# and runs shell tools, SQLite, random I/O against a local reference,
# permission checks as nobody, layout xattrs, the native API on the same
# files (mount_helper), unmounting under a reader, and prints the
# throughput of the mount and of the native API; test_mount_t.sh goes
# through mount(8): `mount -t clf` and an fstab line.  Skipped (77) only
# without /dev/fuse.  test_mount_romio.sh: the same bytes through the
# mount and through MPI-IO, both ways (skipped without MPICH or
# libromio-clf.so).  test_mount_lock.sh: fcntl and flock locks across two
# mounts, a blocking lock, a killed holder, a native holder.
# test_mount_recovery.sh: a shell loop through the mount while an iod
# and metad are killed and restarted: no error.  test_posix.sh: our POSIX conformance suite (posix_suite.py: symlinks,
# hard links, fifos, sockets, devices and every namespace call, as root
# and as nobody) over two mounts, and those objects through the native
# API.  test_stage_mount.sh: renames and removals through the mount of
# an instance with a backing directory reach that directory.
#
#   make check-mount
#   make check-posix      test_posix.sh alone

ifeq ($(CONFIG_CLF_FUSE),y)

MOUNT_TEST := tests/integration/test_mount.sh tests/integration/test_mount_t.sh \
	tests/integration/test_mount_romio.sh tests/integration/test_mount_lock.sh \
	tests/integration/test_posix.sh tests/integration/test_mount_recovery.sh \
	tests/integration/test_mount_parallel.sh tests/integration/test_stage_mount.sh
MOUNT_HELPER := $(O)/tests/integration/mount_helper

$(MOUNT_HELPER): $(O)/tests/integration/mount_helper.o $(O)/libclf.a
	$(CC) -o $@ $< $(O)/libclf.a $(LIBCLF_EXTRA_LIBS) $(ALL_LDFLAGS)

.PHONY: check-mount
check-mount: $(MOUNT_HELPER) $(O)/kernel/mount.clf $(O)/tools/clf \
		$(filter $(O)/metad/metad $(O)/iod/iod,$(PROGRAMS)) \
		$(filter %/romio_xfer,$(ROMIO_TEST_PROGS))
	@CLF_BUILD_DIR=$(O) scripts/run-tests.sh $(MOUNT_TEST)

CHECK_TARGETS += check-mount

.PHONY: check-posix
check-posix: $(MOUNT_HELPER) $(O)/kernel/mount.clf $(O)/tools/clf \
		$(filter $(O)/metad/metad $(O)/iod/iod,$(PROGRAMS))
	@CLF_BUILD_DIR=$(O) scripts/run-tests.sh tests/integration/test_posix.sh

endif
