# The kernel client (kernel/module/, CONFIG_CLF_KERNEL_MODULE) in a qemu
# guest booting Debian's kernel (tests/guest/run-guest.sh, the recipe of
# shared/GUEST.md; about 8 minutes on 2 cores under TCG, 14 when loaded):
#
#   make check-kclient
#   make bench-kclient     bench/kclient_vs_fuse.sh in the guest

ifeq ($(CONFIG_CLF_KERNEL_MODULE),y)

KCLIENT_DEPS := $(O)/kernel/module/clf.ko $(O)/kernel/mount.clf \
	$(O)/tools/clf $(O)/tests/integration/mount_helper \
	$(filter $(O)/metad/metad $(O)/iod/iod,$(PROGRAMS))

.PHONY: check-kclient bench-kclient
check-kclient: $(KCLIENT_DEPS)
	@CLF_BUILD_DIR=$(O) scripts/run-tests.sh tests/guest/test_kclient.sh

CHECK_TARGETS += check-kclient

bench-kclient: $(KCLIENT_DEPS)
	tests/guest/run-guest.sh --build $(O) --out $(O)/guest/bench \
		--timeout 600 $(CURDIR)/bench/kclient_vs_fuse.sh $(abspath $(O))

endif

# checkpatch.pl --strict of the module's sources and the shared header
# (kernel style; clean).  checkpatch comes with linux-source only (a
# 139 MB package, so not in make deps): CHECKPATCH=path/to/checkpatch.pl.
CHECKPATCH ?= $(firstword $(wildcard /usr/src/linux-source-*/scripts/checkpatch.pl))
.PHONY: checkpatch-kclient
checkpatch-kclient:
	@[ -n "$(CHECKPATCH)" ] || { echo "checkpatch-kclient: no checkpatch.pl (install linux-source, or CHECKPATCH=...)"; exit 1; }
	$(CHECKPATCH) --no-tree --strict -f kernel/module/*.c kernel/module/*.h \
		kernel/clf_upcall.h
