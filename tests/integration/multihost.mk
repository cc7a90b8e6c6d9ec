# Multi-host integration test: tests/integration/test_multihost.sh puts
# each iod in a network namespace of its own, reached over a veth pair,
# and drives multihost_client (native API) against them.  Needs root
# (ip netns); skips (77) without it.
# test_adhoc_hosts.sh: clf adhoc placed by hydra on two namespace "hosts".
#
#   make check-multihost

MULTIHOST_CLIENT := $(O)/tests/integration/multihost_client
MULTIHOST_TEST := tests/integration/test_multihost.sh \
	tests/integration/test_adhoc_hosts.sh

$(O)/tests/integration/multihost_client.o: tests/integration/multihost_client.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(MULTIHOST_CLIENT): $(O)/tests/integration/multihost_client.o $(O)/libclf.a
	$(CC) -o $@ $< $(O)/libclf.a $(LIBCLF_EXTRA_LIBS) $(ALL_LDFLAGS)

.PHONY: check-multihost
check-multihost: $(MULTIHOST_CLIENT) $(PROGRAMS)
	@CLF_BUILD_DIR=$(O) scripts/run-tests.sh $(MULTIHOST_TEST)

CHECK_TARGETS += check-multihost
