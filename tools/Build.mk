# tools: the clf command line (tools/clf.c dispatches to one cmd_*.c per
# subcommand).  It talks to the daemons through libclf's private
# protocol, transport and configuration headers, hence $(LIBCLF_INCLUDES).

CLF_TOOL_SRCS := tools/clf.c tools/cmd_up.c tools/cmd_down.c \
	tools/cmd_status.c tools/cmd_df.c tools/table_opts.c tools/daemon_ctl.c \
	tools/probe.c \
	tools/format.c
# The file commands (tool_fs.c shares their connecting, paths, messages
# and layout options).
CLF_TOOL_SRCS += tools/tool_fs.c tools/cmd_setlayout.c \
	tools/cmd_getlayout.c tools/cmd_map.c tools/map_picture.c tools/map_font.c \
	tools/png.c tools/cmd_cp.c tools/cp_ahead.c tools/tool_jobs.c tools/cmd_stage.c tools/cmd_iod.c tools/cmd_forward.c tools/cmd_forward_merge.c tools/cmd_ls.c tools/cmd_mkdir.c \
	tools/cmd_rm.c tools/cmd_stat.c
# clf adhoc: an instance per job, its ranks meeting in a shared directory.
CLF_TOOL_SRCS += tools/cmd_adhoc.c tools/cmd_stager.c tools/tool_stage.c
# fsck, backup, restore: metad's store, opened beside metad.
CLF_TOOL_SRCS += tools/cmd_store.c tools/fsck.c
CLF_TOOL_OBJS := $(CLF_TOOL_SRCS:%.c=$(O)/%.o)
$(O)/tools/cmd_store.o $(O)/tools/fsck.o: ALL_CFLAGS += -Imetad

$(CLF_TOOL_OBJS): ALL_CFLAGS += $(LIBCLF_INCLUDES)

PROGRAMS += $(O)/tools/clf

$(O)/tools/clf: $(CLF_TOOL_OBJS) $(O)/metad/libmds_store.a $(O)/libclf.a
	$(CC) -o $@ $(CLF_TOOL_OBJS) $(O)/metad/libmds_store.a $(O)/libclf.a \
		$(MDS_STORE_LIBS) $(LIBCLF_EXTRA_LIBS) -lz $(ALL_LDFLAGS)

# Unit test of the parts that need no daemon (tests/Build.mk's rules).
UNIT_TEST_NAMES += test_tools
TEST_OBJS_test_tools := $(O)/tools/format.o $(O)/tools/daemon_ctl.o \
	$(O)/tools/probe.o
$(O)/tests/unit/test_tools.o: ALL_CFLAGS += -Itools

# The PNG encoder and the picture of `clf map --png`, decoded back.
UNIT_TEST_NAMES += test_png
TEST_OBJS_test_png := $(O)/tools/png.o $(O)/tools/map_picture.o \
	$(O)/tools/map_font.o
TEST_LIBS_test_png := -lz
$(O)/tests/unit/test_png.o: ALL_CFLAGS += -Itools
