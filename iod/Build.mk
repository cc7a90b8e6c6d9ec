# iod: the I/O daemon.
#
# IOD_CORE_OBJS is everything an iod does with data -- subfiles on the
# local disk, the view registry, view I/O and collective merging -- as a
# library with no network code; the daemon program links it with its
# loop, and the unit tests link the parts they test.  The objects are
# built by the top Makefile's $(O)/%.o rule; they include libclf's
# private error.h, hence -Ilibclf.

IOD_CORE_SRCS := iod/iod_rangelock.c iod/iod_store.c iod/iod_store_io.c \
	iod/iod_view.c iod/iod_viewio.c iod/iod_merge.c
IOD_CORE_OBJS := $(IOD_CORE_SRCS:%.c=$(O)/%.o)
IOD_CORE_LIBS := -lpthread

$(IOD_CORE_OBJS): ALL_CFLAGS += -Ilibclf
