# iod: the I/O daemon.
#
# IOD_CORE_OBJS is everything an iod does with data -- subfiles on the
# local disk, the view registry, view I/O and collective merging -- as a
# library with no network code; the daemon program links it with its
# loop, and the unit tests link the parts they test.  The objects are
# built by the top Makefile's $(O)/%.o rule; they include libclf's
# private error.h, hence $(LIBCLF_INCLUDES).

IOD_CORE_SRCS := iod/iod_rangelock.c iod/iod_lock.c iod/iod_lock_shape.c iod/iod_store.c iod/iod_store_io.c \
	iod/iod_view.c iod/iod_viewio.c iod/iod_merge.c \
	iod/iod_share.c iod/iod_store_list.c
IOD_CORE_OBJS := $(IOD_CORE_SRCS:%.c=$(O)/%.o)
IOD_CORE_LIBS := -lpthread

$(IOD_CORE_OBJS): ALL_CFLAGS += $(LIBCLF_INCLUDES)

# The daemon, one way down: options and daemonizing (iod.c), the
# listener and one thread per connection (iod_server.c), the opcode table
# and the service of one request (iod_dispatch.c), a handler per opcode
# (iod_ops.c; the data requests in iod_ops_io.c, their vectored forms
# in iod_ops_vec.c, a forwarder's merged collectives in
# iod_ops_merged.c), how their data travels
# (iod_xfer.c; in pieces: iod_stream.c), the connection's buffers
# (iod_conn.c), replies (iod_reply.c), collective operations
# (iod_collective.c), test hooks (iod_hooks.c), capabilities (iod_cap.c)
# and the log (iod_log.c).
IOD_DAEMON_SRCS := iod/iod.c iod/iod_server.c iod/iod_dispatch.c \
	iod/iod_ops.c iod/iod_ops_io.c iod/iod_ops_vec.c iod/iod_ops_many.c \
	iod/iod_ops_merged.c \
	iod/iod_xfer.c iod/iod_stream.c \
	iod/iod_conn.c iod/iod_reply.c iod/iod_collective.c iod/iod_coll_done.c \
	iod/iod_hooks.c iod/iod_log.c iod/iod_cap.c iod/iod_lock_ops.c \
	iod/iod_fence.c
IOD_DAEMON_OBJS := $(IOD_DAEMON_SRCS:%.c=$(O)/%.o)

$(IOD_DAEMON_OBJS): ALL_CFLAGS += $(LIBCLF_INCLUDES)

PROGRAMS += $(O)/iod/iod

$(O)/iod/iod: $(IOD_DAEMON_OBJS) $(IOD_CORE_OBJS) $(O)/libclf.a
	$(CC) -o $@ $(IOD_DAEMON_OBJS) $(IOD_CORE_OBJS) $(O)/libclf.a \
		$(IOD_CORE_LIBS) $(LIBCLF_EXTRA_LIBS) $(ALL_LDFLAGS)
