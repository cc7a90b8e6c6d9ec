# The RDMA transport over soft-RoCE in a qemu guest booting Debian's
# kernel with this machine's root over 9p (tests/guest/run-guest.sh);
# about 7 minutes on 2 quiet cores under TCG, 13 under a load of 15 (the
# limit: 25).
# make deps installs qemu, the kernel image and rdma-core; a missing one
# fails the target rather than skipping it.

# A client that vanishes mid-message, many times: nothing leaks at the iod.
RDMA_DISCONNECT := $(O)/tests/guest/rdma_disconnect
$(RDMA_DISCONNECT): tests/guest/rdma_disconnect.c $(O)/libclf.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LIBCLF_INCLUDES) -o $@ $< $(O)/libclf.a \
		$(LIBCLF_EXTRA_LIBS) $(ALL_LDFLAGS)

# A program on libclf.so, whose unmaps libclf cannot see: a remapped
# buffer must not send its old pages (transport_rdma_memhooks.c).
RDMA_REMAP_SO := $(O)/tests/guest/rdma_remap_so
$(RDMA_REMAP_SO): tests/guest/rdma_remap_so.c $(O)/libclf.so
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Iinclude -o $@ $< -L$(O) -lclf \
		-Wl,-rpath,$(abspath $(O)) $(ALL_LDFLAGS)

# What idle RDMA connections cost an iod in memory (its shared receive
# queue): rdma_conns.c.
RDMA_CONNS := $(O)/tests/guest/rdma_conns
$(RDMA_CONNS): tests/guest/rdma_conns.c $(O)/libclf.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LIBCLF_INCLUDES) -o $@ $< $(O)/libclf.a \
		$(LIBCLF_EXTRA_LIBS) $(ALL_LDFLAGS)

# A client on two RDMA devices registers a buffer once per device
# (transport_rdma_devcache.h): rdma_devices.c.
RDMA_DEVICES := $(O)/tests/guest/rdma_devices
$(RDMA_DEVICES): tests/guest/rdma_devices.c $(O)/libclf.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LIBCLF_INCLUDES) -o $@ $< $(O)/libclf.a \
		$(LIBCLF_EXTRA_LIBS) $(ALL_LDFLAGS)

.PHONY: check-rdma-guest
ifeq ($(CONFIG_CLF_TRANSPORT_RDMA),y)
CHECK_TARGETS += check-rdma-guest
# romio_xfer and the matrix experiment (bench/mpi_matrix): MPI-IO over
# RDMA (rdma_mpiio.sh); romio.mk, which defines ROMIO_TEST_PROGS, is read
# before this file (tests/integration/Build.mk), bench/Build.mk too.
check-rdma-guest: $(NATIVE_TEST) $(PROGRAMS) $(RDMA_DISCONNECT) $(RDMA_REMAP_SO) \
		$(RDMA_CONNS) $(RDMA_DEVICES) \
		$(filter %/romio_xfer,$(ROMIO_TEST_PROGS)) \
		$(filter %/mpi_matrix,$(BENCH_MPI_PROGS))
	@tests/guest/run-guest.sh --build $(O) --out $(O)/guest/rdma \
		--timeout 1500 $(CURDIR)/tests/guest/rdma_tests.sh $(abspath $(O))
else
check-rdma-guest:
	@echo "FAIL: check-rdma-guest: built without CONFIG_CLF_TRANSPORT_RDMA (make deps installs rdma-core's headers)" >&2; exit 1
endif
