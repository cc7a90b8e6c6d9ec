# Integration tests of the clf command line against the real daemons on
# loopback: tests/integration/test_clf_cli.sh runs `clf up/status/df/down`,
# test_clf_layout_cli.sh the file commands (setlayout, getlayout, map,
# cp, ls, mkdir); test_paper_plots.sh the figures of bench/paper.sh.
#
#   make check-cli                      run it
#   make O=build-asan CONFIG_CLF_SANITIZERS=y check-cli
#                                       the same with ASan builds
#
# It depends on the daemons only where their fragments define them; the
# script skips (77) while they are not built.

CLI_TEST := tests/integration/test_clf_cli.sh \
	tests/integration/test_clf_layout_cli.sh tests/integration/test_clf_store.sh \
	tests/integration/test_cli_recovery.sh tests/integration/test_daemon_signals.sh \
	tests/integration/test_paper_plots.sh tests/integration/test_fsck_remote.sh \
	tests/integration/test_adhoc.sh tests/integration/test_elastic.sh \
	tests/integration/test_stage.sh
CLI_TEST_DAEMONS := $(filter $(O)/metad/metad $(O)/iod/iod,$(PROGRAMS))

# The client that writes and checks under `clf iod remove`.
ELASTIC_CLIENT := $(O)/tests/integration/elastic_client
$(O)/tests/integration/elastic_client.o: tests/integration/elastic_client.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<
$(ELASTIC_CLIENT): $(O)/tests/integration/elastic_client.o $(O)/libclf.a
	$(CC) -o $@ $< $(O)/libclf.a $(LIBCLF_EXTRA_LIBS) $(ALL_LDFLAGS)

.PHONY: check-cli
check-cli: $(O)/tools/clf $(CLI_TEST_DAEMONS) $(ELASTIC_CLIENT)
	@CLF_BUILD_DIR=$(O) scripts/run-tests.sh $(CLI_TEST)

CHECK_TARGETS += check-cli
