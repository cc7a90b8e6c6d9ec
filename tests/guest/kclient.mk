# The kernel client (kernel/module/, CONFIG_CLF_KERNEL_MODULE) in a qemu
# guest booting Debian's kernel (tests/guest/run-guest.sh, the recipe of
# shared/GUEST.md; about 40 s on 2 cores under TCG):
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
