# The RDMA transport over soft-RoCE in a qemu guest booting Debian's
# kernel with this machine's root over 9p (tests/guest/run-guest.sh);
# about 3 minutes on 2 cores under TCG.
# make deps installs qemu, the kernel image and rdma-core; a missing one
# fails the target rather than skipping it.

# A client that vanishes mid-message, many times: nothing leaks at the iod.
RDMA_DISCONNECT := $(O)/tests/guest/rdma_disconnect
$(RDMA_DISCONNECT): tests/guest/rdma_disconnect.c $(O)/libclf.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LIBCLF_INCLUDES) -o $@ $< $(O)/libclf.a \
		$(LIBCLF_EXTRA_LIBS) $(ALL_LDFLAGS)

.PHONY: check-rdma-guest
ifeq ($(CONFIG_CLF_TRANSPORT_RDMA),y)
CHECK_TARGETS += check-rdma-guest
check-rdma-guest: $(NATIVE_TEST) $(PROGRAMS) $(RDMA_DISCONNECT)
	@tests/guest/run-guest.sh --build $(O) --out $(O)/guest/rdma \
		--timeout 540 $(CURDIR)/tests/guest/rdma_tests.sh $(abspath $(O))
else
check-rdma-guest:
	@echo "FAIL: check-rdma-guest: built without CONFIG_CLF_TRANSPORT_RDMA (make deps installs rdma-core's headers)" >&2; exit 1
endif
