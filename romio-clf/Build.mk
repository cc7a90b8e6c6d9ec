# romio-clf: the ROMIO ADIO driver for clf ("clf:" file names), built into
# $(O)/romio-clf/libromio-clf.so together with MPICH's own ROMIO sources
# (romio-clf/README.md says how and why).
#
# build-romio.sh fetches the ROMIO source of the installed MPICH into
# $(O)/romio-src (a cache), patches and configures a copy in $(O)/romio
# and compiles it with ROMIO's own Makefile and flags.  When that source
# cannot be had it leaves $(O)/romio/UNAVAILABLE and everything here is
# skipped (so are the tests).  The driver and glue are ours: compiled here
# with our warnings, against ROMIO's configured headers.

ROMIO_MPICC := $(shell command -v mpicc 2>/dev/null)
ifeq ($(CONFIG_CLF_ROMIO)$(CONFIG_CLF_SANITIZERS),yn)
ifneq ($(ROMIO_MPICC),)

ROMIO_WORK := $(O)/romio
ROMIO_SRC := $(ROMIO_WORK)/src
ROMIO_READY := $(ROMIO_WORK)/.ready
ROMIO_LIB := $(O)/romio-clf/libromio-clf.so
# Recipes below do nothing when the ROMIO source is unavailable.
ROMIO_SKIP := test -f $(ROMIO_WORK)/UNAVAILABLE ||

ROMIO_CLF_SRCS := romio-clf/glue.c romio-clf/ad_clf/ad_clf.c romio-clf/ad_clf/ad_clf_async.c \
	romio-clf/ad_clf/ad_clf_cache.c \
	romio-clf/ad_clf/ad_clf_ahead.c \
	romio-clf/ad_clf/ad_clf_close.c romio-clf/ad_clf/ad_clf_coll.c \
	romio-clf/ad_clf/ad_clf_coop.c romio-clf/ad_clf/ad_clf_coop_coll.c \
	romio-clf/ad_clf/ad_clf_common.c \
	romio-clf/ad_clf/ad_clf_delete.c romio-clf/ad_clf/ad_clf_dtype.c \
	romio-clf/ad_clf/ad_clf_fcntl.c romio-clf/ad_clf/ad_clf_features.c \
	romio-clf/ad_clf/ad_clf_flatten.c \
	romio-clf/ad_clf/ad_clf_flush.c romio-clf/ad_clf/ad_clf_hints.c \
	romio-clf/ad_clf/ad_clf_io_strided.c romio-clf/ad_clf/ad_clf_lock.c \
	romio-clf/ad_clf/ad_clf_mount.c \
	romio-clf/ad_clf/ad_clf_open.c romio-clf/ad_clf/ad_clf_read.c romio-clf/ad_clf/ad_clf_realms.c \
	romio-clf/ad_clf/ad_clf_resize.c romio-clf/ad_clf/ad_clf_typemap.c \
	romio-clf/ad_clf/ad_clf_wait.c romio-clf/ad_clf/ad_clf_write.c
ROMIO_CLF_OBJS := $(ROMIO_CLF_SRCS:%.c=$(O)/%.o)

# ROMIO's headers are not ours to keep warning-free: -isystem.
ROMIO_CLF_CFLAGS := -std=gnu11 $(WARNINGS) $(CFLAGS) -fPIC -fvisibility=hidden \
	-MMD -MP -Iinclude -Iromio-clf -Iromio-clf/ad_clf \
	-isystem $(ROMIO_SRC)/adio/include -isystem $(ROMIO_SRC)/include \
	-isystem $(ROMIO_SRC)/mpi-io -isystem $(ROMIO_SRC)/mpl/include

LIBS += $(ROMIO_LIB)

$(ROMIO_READY): romio-clf/build-romio.sh romio-clf/fetch-romio.sh \
		romio-clf/romio-clf.patch
	+@MAKE="$(MAKE)" romio-clf/build-romio.sh $(O)
	@if [ ! -f $(ROMIO_WORK)/UNAVAILABLE ]; then touch $@; fi

$(ROMIO_CLF_OBJS): $(O)/romio-clf/%.o: romio-clf/%.c $(ROMIO_READY)
	@mkdir -p $(dir $@)
	@$(ROMIO_SKIP) { echo "  CC      $@"; \
		$(ROMIO_MPICC) $(ROMIO_CLF_CFLAGS) -c -o $@ $<; }

# -Bsymbolic: ROMIO's calls to its own MPI_File_* stay inside; libmpich
# keeps its own copies for its internal use.  The version script exports
# the MPI API only.
$(ROMIO_LIB): $(ROMIO_CLF_OBJS) $(O)/libclf.a romio-clf/libromio-clf.map $(ROMIO_READY)
	@$(ROMIO_SKIP) { echo "  LD      $@"; \
		$(ROMIO_MPICC) -shared -o $@ -Wl,-soname,libromio-clf.so \
		-Wl,-Bsymbolic -Wl,--version-script=romio-clf/libromio-clf.map \
		-Wl,--no-undefined \
		-Wl,--whole-archive $(ROMIO_WORK)/libromio-objs.a \
		-Wl,--no-whole-archive $(ROMIO_CLF_OBJS) \
		$(ROMIO_SRC)/mpl/.libs/libmpl.a $(O)/libclf.a \
		$(LIBCLF_EXTRA_LIBS) $(ALL_LDFLAGS); }
	@if [ -f $(ROMIO_WORK)/UNAVAILABLE ]; then \
		echo "romio-clf: skipped: $$(cat $(ROMIO_WORK)/UNAVAILABLE)"; fi

endif
endif
