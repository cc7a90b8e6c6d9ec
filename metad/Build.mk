# metad: the metadata server.
#
# The store (namespace, inodes and layouts, durable in LMDB) is a set of
# objects, MDS_STORE_OBJS, that the daemon and the unit tests link
# together with libclf.a (messages, datatype decoding) and MDS_STORE_LIBS.
# The archive below is built by `make all` so that the store cannot rot
# before the daemon uses it.

MDS_STORE_SRCS := metad/mds_store.c metad/mds_inode.c metad/mds_layout.c \
	metad/mds_namespace.c metad/mds_attr.c metad/mds_verify.c
MDS_STORE_OBJS = $(MDS_STORE_SRCS:%.c=$(O)/%.o)
MDS_STORE_LIBS := -llmdb

# The store uses libclf's private headers: wire.h, error.h.
$(MDS_STORE_OBJS): ALL_CFLAGS += -Ilibclf

LIBS += $(O)/metad/libmds_store.a

$(O)/metad/libmds_store.a: $(MDS_STORE_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^
