# metad: the metadata server.
#
# The store (namespace, inodes and layouts, durable in LMDB) is a set of
# objects, MDS_STORE_OBJS, that the daemon and the unit tests link
# together with libclf.a (messages, datatype decoding) and MDS_STORE_LIBS.
# The archive below is built by `make all` so that the store cannot rot
# before the daemon uses it.

MDS_STORE_SRCS := metad/mds_store.c metad/mds_keys.c metad/mds_lmdb.c \
	metad/mds_reply_note.c metad/mds_inode.c metad/mds_layout.c \
	metad/mds_namespace.c metad/mds_attr.c metad/mds_verify.c \
	metad/mds_gcq.c metad/mds_replies.c metad/mds_group.c \
	metad/mds_remote.c metad/mds_intents.c metad/mds_entry.c \
	metad/mds_wal.c
# Read-only handles, backup and restore beside metad (clf fsck/backup).
MDS_STORE_SRCS += metad/mds_backup.c metad/mds_sublen.c
MDS_STORE_OBJS = $(MDS_STORE_SRCS:%.c=$(O)/%.o)
MDS_STORE_LIBS := -llmdb -lpthread

# The store uses libclf's private headers: wire.h, error.h.
$(MDS_STORE_OBJS): ALL_CFLAGS += $(LIBCLF_INCLUDES)

LIBS += $(O)/metad/libmds_store.a

$(O)/metad/libmds_store.a: $(MDS_STORE_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

# The daemon: the network program around the store.
METAD_SRCS := metad/metad.c metad/mds_server.c metad/mds_dispatch.c \
	metad/mds_ops.c \
	metad/mds_ops_ns.c metad/mds_ops_attr.c metad/mds_ops_link.c metad/mds_ops_cap.c metad/mds_ops_dirplus.c \
	metad/mds_wire.c metad/mds_perm.c metad/mds_ops_perm.c \
	metad/mds_data.c metad/mds_iods.c metad/mds_log.c metad/mds_fault.c \
	metad/mds_gc.c metad/mds_replay.c
# A namespace over several metads: RESOLVE and what metads ask each other.
METAD_SRCS += metad/mds_peer.c metad/mds_ops_peer.c metad/mds_xrename.c metad/mds_move.c \
	metad/mds_retire.c metad/mds_ops_iod.c
# Byte-range locks: the in-memory table and its requests.
METAD_SRCS += metad/mds_lock.c metad/mds_lock_wait.c metad/mds_ops_lock.c
# Append ends: the in-memory table and APPEND.
METAD_SRCS += metad/mds_append.c metad/mds_ops_append.c
METAD_OBJS = $(METAD_SRCS:%.c=$(O)/%.o)

# The daemon uses libclf's private headers: proto.h, transport.h, auth.h,
# config.h, error.h.
$(METAD_OBJS): ALL_CFLAGS += $(LIBCLF_INCLUDES)

PROGRAMS += $(O)/metad/metad

$(O)/metad/metad: $(METAD_OBJS) $(MDS_STORE_OBJS) $(O)/libclf.a
	$(CC) -o $@ $(METAD_OBJS) $(MDS_STORE_OBJS) $(O)/libclf.a \
		$(MDS_STORE_LIBS) $(LIBCLF_EXTRA_LIBS) $(ALL_LDFLAGS)

# Unit test of the daemon's own arithmetic: the subfile lengths of a
# truncation (tests/unit/test_mds_data.c).
UNIT_TEST_NAMES += test_mds_data
TEST_OBJS_test_mds_data = $(O)/metad/mds_data.o $(O)/metad/mds_iods.o \
	$(O)/metad/mds_log.o $(O)/metad/mds_sublen.o

# Unit test of the permission checks (tests/unit/test_mds_perm.c).
UNIT_TEST_NAMES += test_mds_perm
TEST_OBJS_test_mds_perm = $(O)/metad/mds_perm.o

# Unit test of the byte-range lock table (tests/unit/test_mds_lock.c).
UNIT_TEST_NAMES += test_mds_lock
TEST_OBJS_test_mds_lock = $(O)/metad/mds_lock.o $(O)/metad/mds_lock_wait.o
TEST_LIBS_test_mds_lock := -lpthread

# Unit test of the append ends (tests/unit/test_mds_append.c).
UNIT_TEST_NAMES += test_mds_append
TEST_OBJS_test_mds_append = $(O)/metad/mds_append.o
TEST_LIBS_test_mds_append := -lpthread
