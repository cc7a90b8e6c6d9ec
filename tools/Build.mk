# tools: the clf command line (tools/clf.c dispatches to one cmd_*.c per
# subcommand).  It talks to the daemons through libclf's private
# protocol, transport and configuration headers, hence -Ilibclf.

CLF_TOOL_SRCS := tools/clf.c tools/cmd_up.c tools/cmd_down.c \
	tools/cmd_status.c tools/cmd_df.c tools/daemon_ctl.c tools/probe.c \
	tools/format.c
CLF_TOOL_OBJS := $(CLF_TOOL_SRCS:%.c=$(O)/%.o)

$(CLF_TOOL_OBJS): ALL_CFLAGS += -Ilibclf

PROGRAMS += $(O)/tools/clf

$(O)/tools/clf: $(CLF_TOOL_OBJS) $(O)/libclf.a
	$(CC) -o $@ $(CLF_TOOL_OBJS) $(O)/libclf.a $(LIBCLF_EXTRA_LIBS) \
		$(ALL_LDFLAGS)

# Unit test of the parts that need no daemon (tests/Build.mk's rules).
UNIT_TEST_NAMES += test_tools
TEST_OBJS_test_tools := $(O)/tools/format.o $(O)/tools/daemon_ctl.o \
	$(O)/tools/probe.o
$(O)/tests/unit/test_tools.o: ALL_CFLAGS += -Itools
