# Users and permissions: tests/integration/test_perm.sh starts munged
# when it is not running, creates two users and a shared group, starts
# an instance with auth = munge, and runs the table of allowed and
# forbidden operations as those users through the native API
# (perm_client), the clf command line and MPI-IO (perm_mpi), then
# forged, expired and replayed MUNGE credentials.
#
#   make check-perm       run it (as root: it adds users)

PERM_TEST := tests/integration/test_perm.sh
PERM_DIR := $(O)/tests/integration/perm
PERM_PROGS := $(PERM_DIR)/perm_client

$(PERM_DIR)/perm_client: tests/integration/perm/perm_client.c $(O)/libclf.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LIBCLF_INCLUDES) -o $@ $< $(O)/libclf.a \
		$(LIBCLF_EXTRA_LIBS) $(ALL_LDFLAGS)

ifneq ($(ROMIO_LIB),)
PERM_PROGS += $(PERM_DIR)/perm_mpi
# Linked through mpicc-clf, as users do.
$(PERM_DIR)/perm_mpi: tests/integration/perm/perm_mpi.c $(ROMIO_LIB) \
		romio-clf/mpicc-clf
	@mkdir -p $(dir $@)
	@$(ROMIO_SKIP) { echo "  CCLD    $@"; CLF_BUILD_DIR=$(O) \
		romio-clf/mpicc-clf -std=gnu11 $(WARNINGS) $(CFLAGS) -o $@ $<; }
endif

.PHONY: check-perm
check-perm: $(PERM_PROGS) $(O)/tools/clf $(PROGRAMS)
	@CLF_BUILD_DIR=$(O) scripts/run-tests.sh $(PERM_TEST)

CHECK_TARGETS += check-perm
