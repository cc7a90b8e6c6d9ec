# clf adhoc under a real Slurm (tests/integration/test_adhoc_slurm.sh): a
# one-node cluster of slurmctld and slurmd on loopback ports, MUNGE, the
# instance started by srun in a batch job, an MPI step through the ROMIO
# driver, stop and scancel with stage-out.  Needs root.  Read after
# romio.mk (ROMIO_LIB, ROMIO_TEST_DIR).
#
#   make check-slurm

SLURM_TEST := tests/integration/test_adhoc_slurm.sh

.PHONY: check-slurm
check-slurm: $(ROMIO_LIB) $(filter %/romio_io_plain,$(ROMIO_TEST_PROGS)) \
		$(O)/tools/clf \
		$(filter $(O)/metad/metad $(O)/iod/iod,$(PROGRAMS))
	@CLF_BUILD_DIR=$(O) scripts/run-tests.sh $(SLURM_TEST)

CHECK_TARGETS += check-slurm
