# Capabilities at the iods: tests/integration/test_caps.sh runs an
# instance with auth = munge and a 3-second capability lifetime, and as an
# unprivileged user (cap_client) talks to the iod around libclf with no,
# a forged, an expired and another file's capability; then removes write
# from a file a process holds open and sees its writes refused once the
# capability expired.
#
#   make check-caps       run it (as root: it adds a user)

CAPS_TEST := tests/integration/test_caps.sh
CAPS_DIR := $(O)/tests/integration/caps

$(CAPS_DIR)/cap_client: tests/integration/caps/cap_client.c $(O)/libclf.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LIBCLF_INCLUDES) -o $@ $< $(O)/libclf.a \
		$(LIBCLF_EXTRA_LIBS) $(ALL_LDFLAGS)

.PHONY: check-caps
check-caps: $(CAPS_DIR)/cap_client $(O)/tools/clf $(PROGRAMS)
	@CLF_BUILD_DIR=$(O) scripts/run-tests.sh $(CAPS_TEST)

CHECK_TARGETS += check-caps

# Messages after the handshake against a man in the middle with real
# daemons: tests/integration/test_protect.sh through mitm_proxy.py (a
# Python relay that captures, or flips a byte of a write), at
# protection = integrity and privacy.
#
#   make check-protect

.PHONY: check-protect
check-protect: $(O)/tools/clf $(PROGRAMS)
	@CLF_BUILD_DIR=$(O) scripts/run-tests.sh tests/integration/test_protect.sh

CHECK_TARGETS += check-protect
