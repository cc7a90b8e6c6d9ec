# Tests in a qemu guest (tests/guest/run.sh boots Debian's kernel with
# this machine's root over 9p): the RDMA transport over soft-RoCE.
# make deps installs qemu, the kernel image and rdma-core; a missing one
# fails the target rather than skipping it.

.PHONY: check-rdma-guest
ifeq ($(CONFIG_CLF_TRANSPORT_RDMA),y)
CHECK_TARGETS += check-rdma-guest
check-rdma-guest: $(NATIVE_TEST) $(PROGRAMS)
	@tests/guest/run.sh --build $(O) tests/guest/rdma_tests.sh $(O)
else
check-rdma-guest:
	@echo "FAIL: check-rdma-guest: built without CONFIG_CLF_TRANSPORT_RDMA (make deps installs rdma-core's headers)" >&2; exit 1
endif
