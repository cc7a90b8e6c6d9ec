# libclf: the client library (libclf.so exports only the public API, by
# libclf.map; libclf.a is what the unit tests link to reach internals).

# Three layers, one folder each; dependencies run one way only:
#   libclf/engine   datatypes, FALLS, mappings, layouts; no I/O
#   libclf/runtime  shared with the daemons: protocol messages, transports,
#                   authentication, configuration, log, clock
#   libclf/client   connections, files, views, locks, the native calls
# A layer's files see only their own folder and the layers below it
# (LIBCLF_<LAYER>_INCLUDES); scripts/depgraph.sh checks the direction.
LIBCLF_ENGINE_INCLUDES := -Ilibclf/engine
LIBCLF_RUNTIME_INCLUDES := -Ilibclf/runtime $(LIBCLF_ENGINE_INCLUDES)
LIBCLF_CLIENT_INCLUDES := -Ilibclf/client $(LIBCLF_RUNTIME_INCLUDES)
# What the rest of the tree (daemons, tools, mount, tests) compiles with.
LIBCLF_INCLUDES := $(LIBCLF_CLIENT_INCLUDES)

LIBCLF_ENGINE_SRCS := libclf/engine/error.c libclf/engine/falls.c \
	libclf/engine/falls_algebra.c libclf/engine/falls_cursor.c \
	libclf/engine/type.c libclf/engine/type_codec.c libclf/engine/pattern.c \
	libclf/engine/mapping.c libclf/engine/mapping_walk.c \
	libclf/engine/mapping_table.c libclf/engine/mapping_tiles.c \
	libclf/engine/mapping_mem.c libclf/engine/mapping_prog.c \
	libclf/engine/mapping_prog_build.c libclf/engine/mapping_copy.c
# Long block lists found compact (CLF_Blocklist_*, CLF_Type_struct).
LIBCLF_ENGINE_SRCS += libclf/engine/falls_compact.c libclf/engine/type_compact.c
# Layouts and the views declared on them (layout.h).
LIBCLF_ENGINE_SRCS += libclf/engine/layout.c
# Layouts as text (rr:stripe=64k,count=4, ...), for the mount and the CLI.
LIBCLF_ENGINE_SRCS += libclf/engine/layout_text.c \
	libclf/engine/layout_text_fmt.c libclf/engine/layout_text_kinds.c

# Protocol codec, transports, authentication, configuration.
LIBCLF_RUNTIME_SRCS := libclf/runtime/proto.c libclf/runtime/proto_meta.c \
	libclf/runtime/proto_lock.c libclf/runtime/proto_link.c \
	libclf/runtime/proto_decl.c libclf/runtime/proto_msgs.c \
	libclf/runtime/proto_io.c libclf/runtime/transport_base.c \
	libclf/runtime/transport.c \
	libclf/runtime/transport_tcp.c libclf/runtime/tcp_rcvbuf.c libclf/runtime/auth.c \
	libclf/runtime/auth_munge.c libclf/runtime/seal.c \
	libclf/runtime/transport_seal.c libclf/runtime/cap.c \
	libclf/runtime/config.c libclf/runtime/config_url.c \
	libclf/runtime/admission.c \
	libclf/runtime/durable.c libclf/runtime/clock.c
# The daemons' log: one format, levels, reopened on SIGHUP (log.h);
# readiness for systemd (notify.h).
LIBCLF_RUNTIME_SRCS += libclf/runtime/log.c libclf/runtime/notify.c
# The daemons' runtime: daemonizing, signals, pid file, accept loop
# (daemon.h).
LIBCLF_RUNTIME_SRCS += libclf/runtime/daemon.c libclf/runtime/daemon_server.c
# The one hash table of the library and the daemons (hash.h).
LIBCLF_RUNTIME_SRCS += libclf/runtime/hash.c
# The RDMA transport's SEND framing and credits (pure; unit-tested
# everywhere); the transport itself with CONFIG_CLF_TRANSPORT_RDMA=y.
LIBCLF_RUNTIME_SRCS += libclf/runtime/transport_rdma_wire.c
LIBCLF_RUNTIME_SRCS += libclf/runtime/transport_rdma_regcache.c
LIBCLF_RUNTIME_SRCS += libclf/runtime/transport_rdma_devcache.c
ifeq ($(CONFIG_CLF_TRANSPORT_RDMA),y)
LIBCLF_RUNTIME_SRCS += libclf/runtime/transport_rdma.c
LIBCLF_RUNTIME_SRCS += libclf/runtime/transport_rdma_memhooks.c
ALL_CFLAGS += -DCLF_HAVE_RDMA
endif
# What CLF_HAVE_RDMA changes is rebuilt when the option changes.
RDMA_STAMP := $(O)/.rdma-$(CONFIG_CLF_TRANSPORT_RDMA)
$(RDMA_STAMP):
	@mkdir -p $(O) && rm -f $(O)/.rdma-* && touch $@
$(O)/libclf/runtime/transport.o $(O)/tests/unit/test_transport.o: $(RDMA_STAMP)
# Libraries libclf itself links to (protocol, crypto, configuration).
LIBCLF_EXTRA_LIBS :=
LIBCLF_EXTRA_LIBS += $(shell pkg-config --libs libsodium inih 2>/dev/null || \
	echo -lsodium -linih) -lmunge -pthread
# The RDMA transport's libraries: also in clf.pc's Libs.private, for
# programs that link libclf.a (pkg-config --static).
LIBCLF_RDMA_LIBS :=
ifeq ($(CONFIG_CLF_TRANSPORT_RDMA),y)
LIBCLF_RDMA_LIBS := -lrdmacm -libverbs
endif
LIBCLF_EXTRA_LIBS += $(LIBCLF_RDMA_LIBS)

# The native client API: connections, files, views.
LIBCLF_CLIENT_SRCS := libclf/client/client_instance.c \
	libclf/client/client.c libclf/client/client_warm.c libclf/client/client_enc.c \
	libclf/client/client_retry.c libclf/client/client_grace.c \
	libclf/client/client_meta.c libclf/client/file_table.c \
	libclf/client/file_close.c libclf/client/stage_note.c libclf/client/stage_path.c libclf/client/stage_in.c libclf/client/file.c \
	libclf/client/file_cap.c libclf/client/file_size.c \
	libclf/client/file_append.c libclf/client/io.c libclf/client/io_retry.c libclf/client/io_coll.c \
	libclf/client/io_small.c libclf/client/xcache.c \
	libclf/client/view_cache.c libclf/client/client_init.c
# The namespace by inode, for the mount client (clf_ll.h).
LIBCLF_CLIENT_SRCS += libclf/client/client_ns.c libclf/client/client_link.c \
	libclf/client/client_route.c \
	libclf/client/client_dirplus.c
# Byte-range locks kept by metad: by inode, and as POSIX struct flock.
LIBCLF_CLIENT_SRCS += libclf/client/lock.c libclf/client/lock_posix.c
# CLF_Layout_* / CLF_Type_* text calls on open files.
LIBCLF_CLIENT_SRCS += libclf/client/layout_text_api.c

LIBCLF_SRCS := $(LIBCLF_ENGINE_SRCS) $(LIBCLF_RUNTIME_SRCS) $(LIBCLF_CLIENT_SRCS)
$(LIBCLF_ENGINE_SRCS:%.c=$(O)/%.o): ALL_CFLAGS += $(LIBCLF_ENGINE_INCLUDES)
$(LIBCLF_RUNTIME_SRCS:%.c=$(O)/%.o): ALL_CFLAGS += $(LIBCLF_RUNTIME_INCLUDES)
$(LIBCLF_CLIENT_SRCS:%.c=$(O)/%.o): ALL_CFLAGS += $(LIBCLF_CLIENT_INCLUDES)
LIBCLF_OBJS = $(LIBCLF_SRCS:%.c=$(O)/%.o)

# The soname's version changes with an incompatible ABI (libclf.map's
# CLF_0); the file's minor numbers with additions.
LIBCLF_SOVERSION := 0
LIBCLF_VERSION := $(LIBCLF_SOVERSION).1.0

# The system-wide configuration: $(sysconfdir)/clf/clf.conf (config.h;
# the programs' --help name it too).
sysconfdir ?= /etc
ALL_CFLAGS += -DCLF_SYSCONFDIR='"$(sysconfdir)"'
# What every program's --version prints.
ALL_CFLAGS += -DCLF_VERSION='"$(LIBCLF_VERSION)"'

# libclf.so.0 beside libclf.so: a program linked with -Lbuild -lclf
# then runs with LD_LIBRARY_PATH=build.
LIBS += $(O)/libclf.so $(O)/libclf.so.$(LIBCLF_SOVERSION) $(O)/libclf.a

$(O)/libclf.so.$(LIBCLF_SOVERSION): $(O)/libclf.so
	ln -sf libclf.so $@

$(O)/libclf.a: $(LIBCLF_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

$(O)/libclf.so: $(LIBCLF_OBJS) libclf/libclf.map
	$(CC) -shared -o $@ $(LIBCLF_OBJS) -Wl,--version-script=libclf/libclf.map \
		-Wl,-soname,libclf.so.$(LIBCLF_SOVERSION) $(LIBCLF_EXTRA_LIBS) $(ALL_LDFLAGS)

