# systemd: service units for the daemons, installed by `make install`
# with the paths of the install (@sbindir@, @sysconfdir@):
#
#   clf-metad.service    metad
#   clf-iod@.service     an iod; the instance is its index (clf-iod@0)
#
# Both are Type=notify: the daemons send READY=1 to $NOTIFY_SOCKET once
# they serve (libclf/runtime/notify.h).  check-systemd runs systemd-analyze
# verify on them, filled in with this build's daemons.
#
#   make check-systemd

SYSTEMD_UNITS := systemd/clf-metad.service systemd/clf-iod@.service

.PHONY: check-systemd
check-systemd: $(O)/metad/metad $(O)/iod/iod
	@CLF_BUILD_DIR=$(O) scripts/run-tests.sh tests/integration/test_systemd.sh

CHECK_TARGETS += check-systemd
