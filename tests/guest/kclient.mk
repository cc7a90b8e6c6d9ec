# The kernel client (kernel/module/, CONFIG_CLF_KERNEL_MODULE) in a qemu
# guest booting Debian's kernel (tests/guest/run-guest.sh, the recipe of
# shared/GUEST.md; about 6 minutes on 2 quiet cores under TCG, 25 when
# loaded):
#
#   make check-kclient
#   make bench-kclient     bench/kclient_vs_fuse.sh in the guest
#   make fsx-kclient FSX_OPS=100000 [FSX_SEED=1]
#                          fsx alone, as long as asked (15-155
#                          operations a second, loaded to quiet: 100k
#                          took 33 minutes on a loaded machine)

ifeq ($(CONFIG_CLF_KERNEL_MODULE),y)

# fsx (tests/guest/fsx.c): ours, as Debian packages none.
KCLIENT_FSX := $(O)/tests/guest/fsx
$(KCLIENT_FSX): tests/guest/fsx.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(ALL_LDFLAGS)

KCLIENT_DEPS := $(O)/kernel/module/clf.ko $(O)/kernel/mount.clf \
	$(O)/tools/clf $(O)/tests/integration/mount_helper $(KCLIENT_FSX) \
	$(filter $(O)/metad/metad $(O)/iod/iod,$(PROGRAMS))

.PHONY: check-kclient bench-kclient fsx-kclient
check-kclient: $(KCLIENT_DEPS)
	@CLF_BUILD_DIR=$(O) scripts/run-tests.sh tests/guest/test_kclient.sh

FSX_OPS ?= 100000
FSX_SEED ?= 1
fsx-kclient: $(KCLIENT_DEPS)
	tests/guest/run-guest.sh --build $(O) --out $(O)/guest/fsx \
		--timeout $$(($(FSX_OPS) / 8 + 300)) \
		$(CURDIR)/tests/guest/kclient_fsx.sh $(abspath $(O)) $(FSX_OPS) $(FSX_SEED)

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
