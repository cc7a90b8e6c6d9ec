# man: the manual pages, written in roff (man(7) macros) and installed as
# they are by `make install`.  check-man renders each with groff's
# warnings on and man's own checks, and fails on any warning.
#
#   make check-man

MAN_PAGES := man/clf.1 man/mpicc-clf.1 man/libclf.3 man/clf.conf.5 \
	man/metad.8 man/iod.8 \
	man/mount.clf.8

.PHONY: check-man
check-man:
	@scripts/run-tests.sh tests/integration/test_man.sh

CHECK_TARGETS += check-man
