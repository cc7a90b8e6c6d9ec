# clf -- top-level, non-recursive Makefile.
#
# Each folder contributes a Build.mk fragment that appends to the lists
# below; nothing here recurses into sub-makes.  Build options come from
# .config (written by `make defconfig` / `make menuconfig` from Kconfig);
# without one, the defaults below (which mirror Kconfig's) apply.
#
#   make              build the library, daemons and tools
#   make check        install missing packages, build, run every test
#   make check-asan   the unit tests again under ASan + UBSan
#   make check-tsan   unit and threaded integration tests under TSan
#   make bench        build the benchmarks
#   make demo         build and run the layout-vs-view demonstration
#                     (BASE_PORT=P, or CLF_CONFIG of a running instance)
#   make install      install (PREFIX, DESTDIR, bindir, ... : install.mk)
#   make deb          Debian packages in $(O)/deb (debian/Build.mk)
#   make O=dir        build somewhere else than ./build

-include .config

CONFIG_CLF_FUSE ?= y
CONFIG_CLF_ROMIO ?= y
CONFIG_CLF_KERNEL_MODULE ?= y
CONFIG_CLF_SANITIZERS ?= n
CONFIG_CLF_TSAN ?= n
CONFIG_CLF_DEBUG ?= n
# RDMA when its headers are there (make deps installs them).
CONFIG_CLF_TRANSPORT_RDMA ?= $(if $(wildcard /usr/include/rdma/rdma_cma.h),y,n)

O ?= build
CC ?= cc
CFLAGS ?= -O2 -g
WARNINGS := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	-Wno-unused-parameter -Wformat=2
ALL_CFLAGS := -std=gnu11 $(WARNINGS) $(CFLAGS) -fPIC -Iinclude -MMD -MP
ALL_LDFLAGS := $(LDFLAGS)

ifeq ($(CONFIG_CLF_SANITIZERS),y)
ALL_CFLAGS += -O1 -fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=all
ALL_LDFLAGS += -fsanitize=address,undefined
endif
ifeq ($(CONFIG_CLF_TSAN),y)
ALL_CFLAGS += -O1 -fsanitize=thread -fno-omit-frame-pointer
ALL_LDFLAGS += -fsanitize=thread
endif
ifeq ($(CONFIG_CLF_DEBUG),y)
ALL_CFLAGS += -O0 -g3
endif

# The fragments define rules; `make` alone still builds everything.
.DEFAULT_GOAL := all

# Filled in by the fragments.
LIBS :=
PROGRAMS :=
UNIT_TESTS :=
BENCHES :=
CHECK_TARGETS := check-layers

include libclf/Build.mk
include tests/Build.mk
include bench/Build.mk
-include iod/Build.mk metad/Build.mk tools/Build.mk kernel/Build.mk \
	romio-clf/Build.mk tests/integration/Build.mk tests/fuzz/Build.mk
include man/Build.mk systemd/Build.mk
# make install, make uninstall, make deb: after the fragments, whose
# programs and libraries they install.
include install.mk debian/Build.mk

UNIT_TESTS += $(UNIT_TEST_NAMES:%=$(O)/tests/unit/%)

.PHONY: all deps check check-unit check-layers check-asan check-tsan bench demo clean defconfig \
	menuconfig olddefconfig

all: $(LIBS) $(PROGRAMS)

deps:
	@scripts/install-deps.sh

# The README's one test command: packages, build, every test.
check: deps
	@$(MAKE) --no-print-directory all-tests

# Benchmarks are built (not run) so that they cannot rot.
all-tests: $(CHECK_TARGETS) $(BENCHES)

check-unit: $(UNIT_TESTS)
	@scripts/run-tests.sh $(UNIT_TESTS)

# The layers and the file graph (scripts/depgraph.sh): an include that
# crosses libclf's layers the wrong way or reaches another layer's
# private header, a cycle between files' includes, or files of libclf
# or the mount that call each other in a circle, fails.
check-layers: $(O)/libclf.a $(PROGRAMS)
	@scripts/depgraph.sh --quiet --objs $(O) && \
		echo "PASS: layers and file graph"
	@scripts/run-tests.sh tests/integration/test_depgraph.sh

check-asan: deps
	@$(MAKE) --no-print-directory O=$(O)-asan CONFIG_CLF_SANITIZERS=y \
		check-unit

# The unit tests and the integration tests whose daemons and clients run
# threads (tests/integration/tsan.mk), under ThreadSanitizer; a report of
# any process, test or daemon, fails it (scripts/tsan-check.sh).
check-tsan: deps
	@scripts/tsan-check.sh $(MAKE) --no-print-directory O=$(O)-tsan \
		CONFIG_CLF_TSAN=y check-tsan-tests

bench: $(BENCHES)

# The layout-vs-view experiment: the mapping engine alone, then a real
# instance (metad + 2 iods on loopback) written and read natively, then
# through MPI-IO (small sizes; bench/paper.sh alone for the full run).
# make demo BASE_PORT=P: paper.sh's instance on ports P, P+1, P+2;
# CLF_CONFIG=FILE (exported): every part uses that running instance.
demo: deps
	@$(MAKE) --no-print-directory all bench
	$(O)/bench/mapping_bench
	CLF_BENCH_REPS=3 $(O)/bench/matrix_native 4096 256
	bench/paper.sh --quick --build $(O) --out $(O)/demo \
		$(if $(BASE_PORT),--base-port $(BASE_PORT))

$(O)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

defconfig olddefconfig menuconfig:
	@scripts/kconfig.sh $@

clean:
	rm -rf $(O) $(O)-asan $(O)-tsan

-include $(shell find $(O) -name '*.d' 2>/dev/null)
