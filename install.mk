# install.mk -- make install / make uninstall, in the GNU way:
#
#   make install [PREFIX=/usr/local] [DESTDIR=/tmp/root] [bindir=...]
#   make uninstall (the same variables)
#
# installs
#   $(bindir)/clf, $(bindir)/mpicc-clf     the command; mpicc for MPI-IO on clf
#   $(sbindir)/metad, $(sbindir)/iod       the daemons
#   $(mountdir)/mount.clf                  the FUSE mount, where mount(8)
#                                          looks for it (/sbin)
#   $(libdir)/libclf.so.0.x, .so.0, .so    the client library (soname
#   $(libdir)/libclf.a                     libclf.so.0) and its archive
#   $(libdir)/pkgconfig/clf.pc             pkg-config --cflags --libs clf
#   $(includedir)/clf.h, clf_proto.h       the API and the wire protocol
#   $(romiodir)/libromio-clf.so            MPI-IO with the clf driver
#   $(mandir)/man{1,3,5,8}/...             the manual pages (man/)
#   $(systemdunitdir)/clf-metad.service,   systemd units of the daemons
#                     clf-iod@.service     (systemd/), not enabled
#   $(moduledir)/clf.ko                    the kernel client, when built
#                                          (for the headers' kernel KVER);
#                                          depmod when installed as root
#                                          without DESTDIR
#
# The configuration is looked up in $(sysconfdir)/clf/clf.conf (default
# /etc), compiled into libclf (libclf/Build.mk); nothing is installed
# there: `clf up` or the administrator writes it.

PREFIX ?= /usr/local
prefix ?= $(PREFIX)
exec_prefix ?= $(prefix)
bindir ?= $(exec_prefix)/bin
sbindir ?= $(exec_prefix)/sbin
libdir ?= $(exec_prefix)/lib
includedir ?= $(prefix)/include
datarootdir ?= $(prefix)/share
mandir ?= $(datarootdir)/man
pkgconfigdir ?= $(libdir)/pkgconfig
# mount(8) runs /sbin/mount.TYPE whatever the prefix.
mountdir ?= /sbin
# libromio-clf.so is no library to link by itself (it replaces MPICH's
# MPI-IO, through mpicc-clf): a private directory.
romiodir ?= $(libdir)/clf
# Where systemd looks for units of packages ($(prefix)/lib/systemd/system
# is in its search path for /usr and /usr/local alike).
systemdunitdir ?= $(prefix)/lib/systemd/system

# The kernel module: updates/ is searched before the kernel's own.
moduledir ?= /lib/modules/$(KVER)/updates

INSTALL ?= install
INSTALL_PROGRAM ?= $(INSTALL) -m 755
INSTALL_DATA ?= $(INSTALL) -m 644

# The romio line of ldconfig would not matter; run it for libclf when
# installing for real as root.
LDCONFIG ?= $(if $(DESTDIR),true,$(shell [ "$$(id -u)" = 0 ] && \
	command -v ldconfig || echo true))
# The same for depmod (a package runs it from its postinst).
DEPMOD ?= $(if $(DESTDIR),true,$(shell [ "$$(id -u)" = 0 ] && \
	command -v depmod || echo true))
KMODULE := $(filter %/clf.ko,$(PROGRAMS))

INSTALL_PROGRAMS := $(O)/tools/clf $(O)/metad/metad $(O)/iod/iod \
	$(filter %/mount.clf,$(PROGRAMS))

.PHONY: install install-mount uninstall

install: $(LIBS) $(INSTALL_PROGRAMS) $(MAN_PAGES) $(KMODULE)
	$(INSTALL) -d $(DESTDIR)$(bindir) $(DESTDIR)$(sbindir) \
		$(DESTDIR)$(libdir) $(DESTDIR)$(includedir) \
		$(DESTDIR)$(pkgconfigdir)
	$(INSTALL_PROGRAM) $(O)/tools/clf $(DESTDIR)$(bindir)/clf
	$(INSTALL_PROGRAM) $(O)/metad/metad $(DESTDIR)$(sbindir)/metad
	$(INSTALL_PROGRAM) $(O)/iod/iod $(DESTDIR)$(sbindir)/iod
	$(INSTALL_DATA) $(O)/libclf.so \
		$(DESTDIR)$(libdir)/libclf.so.$(LIBCLF_VERSION)
	ln -sf libclf.so.$(LIBCLF_VERSION) \
		$(DESTDIR)$(libdir)/libclf.so.$(LIBCLF_SOVERSION)
	ln -sf libclf.so.$(LIBCLF_SOVERSION) $(DESTDIR)$(libdir)/libclf.so
	$(INSTALL_DATA) $(O)/libclf.a $(DESTDIR)$(libdir)/libclf.a
	$(INSTALL_DATA) include/clf.h include/clf_proto.h \
		$(DESTDIR)$(includedir)/
	sed -e 's|@prefix@|$(prefix)|' -e 's|@libdir@|$(libdir)|' \
		-e 's|@includedir@|$(includedir)|' \
		-e 's|@version@|$(LIBCLF_VERSION)|' \
		-e 's|@rdma_libs@|$(LIBCLF_RDMA_LIBS)|' libclf/clf.pc.in \
		>$(DESTDIR)$(pkgconfigdir)/clf.pc
	chmod 644 $(DESTDIR)$(pkgconfigdir)/clf.pc
	@if [ -n "$(filter %/mount.clf,$(PROGRAMS))" ]; then \
		echo "$(INSTALL) -D -m 755 $(O)/kernel/mount.clf $(DESTDIR)$(mountdir)/mount.clf"; \
		$(INSTALL) -D -m 755 $(O)/kernel/mount.clf \
			$(DESTDIR)$(mountdir)/mount.clf; \
	fi
	@if [ -n "$(ROMIO_LIB)" ] && [ -f "$(ROMIO_LIB)" ]; then \
		echo "$(INSTALL) -D -m 644 $(ROMIO_LIB) $(DESTDIR)$(romiodir)/libromio-clf.so"; \
		$(INSTALL) -D -m 644 $(ROMIO_LIB) \
			$(DESTDIR)$(romiodir)/libromio-clf.so; \
		sed "s|^installed_lib=\$$|installed_lib=$$(realpath -m \
			--relative-to=$(bindir) $(romiodir))|" \
			romio-clf/mpicc-clf >$(DESTDIR)$(bindir)/mpicc-clf; \
		chmod 755 $(DESTDIR)$(bindir)/mpicc-clf; \
	fi
	for p in $(MAN_PAGES); do \
		s=$${p##*.}; \
		$(INSTALL) -d $(DESTDIR)$(mandir)/man$$s && \
		$(INSTALL_DATA) $$p $(DESTDIR)$(mandir)/man$$s/ || exit 1; \
	done
	$(INSTALL) -d $(DESTDIR)$(systemdunitdir)
	for u in $(SYSTEMD_UNITS); do \
		sed -e 's|@sbindir@|$(sbindir)|g' \
			-e 's|@sysconfdir@|$(sysconfdir)|g' $$u.in \
			>$(DESTDIR)$(systemdunitdir)/$${u##*/} && \
		chmod 644 $(DESTDIR)$(systemdunitdir)/$${u##*/} || exit 1; \
	done
ifneq ($(KMODULE),)
	$(INSTALL) -D -m 644 $(KMODULE) $(DESTDIR)$(moduledir)/clf.ko
	$(DEPMOD) -a $(KVER)
endif
	$(LDCONFIG)

# The mount client alone (docs/mount.md).
install-mount: $(filter %/mount.clf,$(PROGRAMS))
	$(INSTALL) -D -m 755 $(O)/kernel/mount.clf $(DESTDIR)$(mountdir)/mount.clf

uninstall:
	rm -f $(DESTDIR)$(bindir)/clf $(DESTDIR)$(bindir)/mpicc-clf \
		$(DESTDIR)$(sbindir)/metad $(DESTDIR)$(sbindir)/iod \
		$(DESTDIR)$(mountdir)/mount.clf \
		$(DESTDIR)$(libdir)/libclf.so.$(LIBCLF_VERSION) \
		$(DESTDIR)$(libdir)/libclf.so.$(LIBCLF_SOVERSION) \
		$(DESTDIR)$(libdir)/libclf.so $(DESTDIR)$(libdir)/libclf.a \
		$(DESTDIR)$(includedir)/clf.h $(DESTDIR)$(includedir)/clf_proto.h \
		$(DESTDIR)$(pkgconfigdir)/clf.pc \
		$(DESTDIR)$(romiodir)/libromio-clf.so \
		$(addprefix $(DESTDIR)$(systemdunitdir)/,$(notdir $(SYSTEMD_UNITS))) \
		$(addprefix $(DESTDIR)$(mandir)/,$(foreach p,$(MAN_PAGES),man$(subst .,,$(suffix $(p)))/$(notdir $(p))))
	-rmdir $(DESTDIR)$(romiodir) 2>/dev/null
	$(LDCONFIG)
ifneq ($(KMODULE),)
	rm -f $(DESTDIR)$(moduledir)/clf.ko
	$(DEPMOD) -a $(KVER)
endif

# test_install.sh: make install into a DESTDIR, then everything from the
# installed files only (tests/integration/installed_lib.sh).
.PHONY: check-install
check-install: $(LIBS) $(INSTALL_PROGRAMS) $(MAN_PAGES) $(KMODULE)
	@CLF_BUILD_DIR=$(O) scripts/run-tests.sh tests/integration/test_install.sh

CHECK_TARGETS += check-install
