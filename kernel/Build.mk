# kernel: `mount -t clf` -- the FUSE mount client (clf-fuse, installed as
# /sbin/mount.clf), built when CONFIG_CLF_FUSE=y.
#
# Request handling (clfs_ops.h: inode table, names, attributes, handles,
# layout xattrs) knows nothing of FUSE, so that a kernel module can reuse
# it; clfs_fuse.c adapts libfuse's low-level API to it and clfs_main.c is
# the program.  The same program is the upcall daemon of the kernel
# client (kernel/module/, -o client=kernel): clfs_upcall.c adapts
# /dev/clf's requests (clf_upcall.h) to the same ops.  mount.clf is the same program under the name mount(8)
# looks for.
#
#   make install [DESTDIR=...]         /sbin/mount.clf (install.mk)
#   make install-mount                 only that

ifeq ($(CONFIG_CLF_FUSE),y)

CLFS_OPS_SRCS := kernel/clfs_inode.c kernel/clfs_attr.c kernel/clfs_ops.c \
	kernel/clfs_io.c kernel/clfs_fs.c \
	kernel/clfs_xattr.c kernel/clfs_log.c kernel/clfs_lock.c \
	kernel/clfs_link.c
CLFS_FUSE_SRCS := kernel/clfs_fuse.c kernel/clfs_opts.c kernel/clfs_main.c \
	kernel/clfs_upcall.c kernel/clfs_kmount.c
CLFS_OPS_OBJS := $(CLFS_OPS_SRCS:%.c=$(O)/%.o)
CLFS_FUSE_OBJS := $(CLFS_FUSE_SRCS:%.c=$(O)/%.o)

FUSE_CFLAGS := $(shell pkg-config --cflags fuse3 2>/dev/null)
FUSE_LIBS := $(shell pkg-config --libs fuse3 2>/dev/null || echo -lfuse3)

# The ops use libclf's private headers (clf_ll.h, proto.h).
$(CLFS_OPS_OBJS) $(CLFS_FUSE_OBJS): ALL_CFLAGS += $(LIBCLF_INCLUDES)
$(CLFS_FUSE_OBJS): ALL_CFLAGS += $(FUSE_CFLAGS)

PROGRAMS += $(O)/kernel/clf-fuse $(O)/kernel/mount.clf

$(O)/kernel/clf-fuse: $(CLFS_FUSE_OBJS) $(CLFS_OPS_OBJS) $(O)/libclf.a
	$(CC) -o $@ $(CLFS_FUSE_OBJS) $(CLFS_OPS_OBJS) $(O)/libclf.a \
		$(FUSE_LIBS) $(LIBCLF_EXTRA_LIBS) $(ALL_LDFLAGS)

# Renamed into place: a mounted file system may be running the old one.
$(O)/kernel/mount.clf: $(O)/kernel/clf-fuse
	cp $< $@.tmp && mv -f $@.tmp $@

# Unit test of what needs neither daemons nor FUSE: the command line and
# the inode table (tests/unit/test_clfs.c).
UNIT_TEST_NAMES += test_clfs
TEST_OBJS_test_clfs := $(O)/kernel/clfs_opts.o $(O)/kernel/clfs_inode.o
TEST_LIBS_test_clfs := -lpthread
$(O)/tests/unit/test_clfs.o: ALL_CFLAGS += -Ikernel

endif

# The kernel module clf.ko (kernel/module/), built out of tree against
# Debian's linux-headers of the guest kernel (tests/guest/), in a copy
# under $(O) so that no build output lands in the source tree.  Kbuild
# gets a clean environment: our make's O= and -j are not its own, nor
# the CFLAGS and LDFLAGS of a user-space build (debian/rules').
ifeq ($(CONFIG_CLF_KERNEL_MODULE),y)

KVER ?= $(notdir $(patsubst %/,%,$(lastword $(sort $(dir $(wildcard \
	/usr/src/linux-headers-*-amd64/Makefile))))))
KVER := $(KVER:linux-headers-%=%)
KDIR ?= /usr/src/linux-headers-$(KVER)
KMOD_SRCS := $(wildcard kernel/module/*.c kernel/module/*.h) \
	kernel/module/Kbuild kernel/clf_upcall.h

ifneq ($(wildcard $(KDIR)/Makefile),)
PROGRAMS += $(O)/kernel/module/clf.ko
$(O)/kernel/module/clf.ko: $(KMOD_SRCS)
	@mkdir -p $(@D)
	cp $(KMOD_SRCS) $(@D)/
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u CFLAGS -u LDFLAGS \
		make -s -C $(KDIR) \
		M=$(abspath $(@D)) W=1 modules
else
$(warning clf: no linux-headers in $(KDIR): the kernel module is not built (scripts/install-deps.sh installs them))
endif

endif

include tests/guest/kclient.mk
