# libclf: the client library (libclf.so exports only the public API, by
# libclf.map; libclf.a is what the unit tests link to reach internals).

LIBCLF_SRCS := libclf/error.c libclf/falls.c libclf/falls_algebra.c \
	libclf/falls_cursor.c libclf/type.c libclf/type_codec.c libclf/pattern.c \
	libclf/mapping.c libclf/mapping_walk.c libclf/mapping_table.c \
	libclf/mapping_tiles.c libclf/mapping_mem.c
# Long block lists found compact (CLF_Blocklist_*, CLF_Type_struct).
LIBCLF_SRCS += libclf/falls_compact.c libclf/type_compact.c
# Network layer: protocol codec, transports, authentication, configuration.
LIBCLF_SRCS += libclf/proto.c libclf/proto_meta.c libclf/proto_lock.c \
	libclf/proto_link.c libclf/proto_decl.c libclf/proto_msgs.c \
	libclf/proto_io.c libclf/transport.c libclf/transport_tcp.c libclf/auth.c libclf/auth_munge.c libclf/seal.c libclf/transport_seal.c libclf/cap.c libclf/config.c \
	libclf/admission.c libclf/durable.c libclf/clock.c
# The daemons' log: one format, levels, reopened on SIGHUP (log.h);
# readiness for systemd (notify.h).
LIBCLF_SRCS += libclf/log.c libclf/notify.c
# The daemons' runtime: daemonizing, signals, pid file, accept loop
# (daemon.h).
LIBCLF_SRCS += libclf/daemon.c libclf/daemon_server.c
# Libraries libclf itself links to (protocol, crypto, configuration).
LIBCLF_EXTRA_LIBS :=
LIBCLF_EXTRA_LIBS += $(shell pkg-config --libs libsodium inih 2>/dev/null || \
	echo -lsodium -linih) -lmunge -pthread
# Client-side layouts and views, and the native client API.
LIBCLF_SRCS += libclf/layout.c libclf/client.c libclf/client_enc.c libclf/client_retry.c libclf/client_grace.c libclf/client_meta.c \
	libclf/file.c libclf/file_cap.c libclf/file_size.c libclf/file_append.c libclf/io.c libclf/io_small.c libclf/view_cache.c
# The namespace by inode, for the mount client (client_ns.h).
LIBCLF_SRCS += libclf/client_ns.c libclf/client_link.c
# Byte-range locks kept by metad: by inode, and as POSIX struct flock.
LIBCLF_SRCS += libclf/lock.c libclf/lock_posix.c
# Layouts as text (rr:stripe=64k,count=4, ...), for the mount and the CLI.
LIBCLF_SRCS += libclf/layout_text.c libclf/layout_text_fmt.c \
	libclf/layout_text_kinds.c libclf/layout_text_api.c
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
