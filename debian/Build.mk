# debian: `make deb` builds the Debian packages with debhelper into
# $(O)/deb: clf-server (metad, iod), clf-client (clf, mount.clf), libclf0,
# libclf-dev, romio-clf (when ROMIO is built), clf-modules (clf.ko, when
# built: a prebuilt module for the headers' kernel, as dkms is not among
# the build machines' packages).  scripts/make-deb.sh runs
# debian/rules binary in $(O)/deb/build, a build with Debian's hardening
# flags apart from $(O); the ROMIO it links is $(O)'s, copied.  check-deb
# (tests/integration/test_deb.sh) checks them with lintian, installs
# them with dpkg into a root of its own, runs an instance from there and
# purges them.
#
#   make deb
#   make check-deb

DEB_OUT := $(O)/deb
DEB_STAMP := $(DEB_OUT)/.stamp
DEB_FILES := $(filter-out debian/tmp debian/files debian/%.substvars \
	debian/debhelper-build-stamp debian/clf-server debian/clf-client \
	debian/libclf0 debian/libclf-dev debian/romio-clf debian/clf-modules,$(wildcard debian/*)) \
	debian/source/format

.PHONY: deb check-deb
deb: $(DEB_STAMP)

# Built again when the project's build or the packaging changed.
$(DEB_STAMP): $(LIBS) $(PROGRAMS) $(MAN_PAGES) $(DEB_FILES) install.mk \
		scripts/make-deb.sh
	+@scripts/make-deb.sh $(O)
	@touch $@

check-deb: $(DEB_STAMP)
	@CLF_BUILD_DIR=$(O) scripts/run-tests.sh tests/integration/test_deb.sh

CHECK_TARGETS += check-deb
