// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_clfs.c -- the parts of the mount client that need no daemon and
 * no FUSE: the command line of mount.clf (kernel/clfs_opts.c) and the
 * inode table (kernel/clfs_inode.c).
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_main.h"
#include "clfs_i.h"
#include "clfs_opts.h"
#include "config.h"

static char dir[64];
static char conf[128], secret[128];

static void setup(void)
{
	FILE *f;

	snprintf(dir, sizeof(dir), "/tmp/clf-test-clfs.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(conf, sizeof(conf), "%s/clf.conf", dir);
	snprintf(secret, sizeof(secret), "%s/secret", dir);
	f = fopen(conf, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "[global]\nmetad = 127.0.0.1:7000\n");
	fclose(f);
	f = fopen(secret, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "00112233445566778899aabbccddeeff\n");
	fclose(f);
	chmod(secret, 0600);
}

static void teardown(void)
{
	unlink(conf);
	unlink(secret);
	rmdir(dir);
}

/* Parse a NULL-terminated argument list. */
static int parse(struct clfs_opts *o, char *msg, const char *first, ...)
{
	char *argv[16] = { "mount.clf" };
	int argc = 1;
	va_list ap;

	va_start(ap, first);
	for (const char *a = first; a; a = va_arg(ap, const char *))
		argv[argc++] = (char *)a;
	va_end(ap);
	return clfs_opts_parse(argc, argv, o, msg, 256);
}

START_TEST(test_opts_config_source_and_mount_flags)
{
	struct clfs_opts o;
	char msg[256];

	ck_assert_int_eq(parse(&o, msg, conf, "/mnt/x", "-o",
			       "allow_other,ro,nosuid,_netdev,noauto,x-systemd.foo,cache=none,log=/tmp/l",
			       "-n", "-v", NULL), 0);
	ck_assert_str_eq(o.config, conf);
	ck_assert_ptr_null(o.metad);
	ck_assert_str_eq(o.mountpoint, "/mnt/x");
	ck_assert(o.allow_other && o.read_only && o.cache_none && !o.fake);
	ck_assert_str_eq(o.log, "/tmp/l");
	ck_assert_ptr_nonnull(strstr(o.kernel, "nosuid,fsname="));
	ck_assert_ptr_nonnull(strstr(o.kernel,
		",subtype=clf,default_permissions,max_read=1048576,allow_other,ro"));
	clfs_opts_release(&o);

	/* config= instead of a file source; -f is fake; -oOPTS glued. */
	ck_assert_int_eq(parse(&o, msg, "anything", "/m", "-f",
			       "-oconfig=", NULL), -EINVAL);
	ck_assert_int_eq(parse(&o, msg, "name,with\\comma", "/m", "-f",
			       "-o", "config=", NULL), -EINVAL);
	ck_assert_int_eq(parse(&o, msg, "src", "/m", "-f", "-o", "rw",
			       "-o", NULL), -EINVAL);
}
END_TEST

START_TEST(test_opts_fsname_escapes_commas)
{
	struct clfs_opts o;
	char msg[256], link[160];

	snprintf(link, sizeof(link), "%s/a,b", dir);
	ck_assert_int_eq(symlink(conf, link), 0);
	ck_assert_int_eq(parse(&o, msg, link, "/m", NULL), 0);
	ck_assert_ptr_nonnull(strstr(o.kernel, "/a\\,b,subtype=clf"));
	clfs_opts_release(&o);
	unlink(link);
}
END_TEST

START_TEST(test_opts_hostport_needs_secret_file_and_writes_a_config)
{
	struct clf_config *cfg;
	struct clfs_opts o;
	char msg[256], opt[160], path[256];

	/* No configuration to find the secret in. */
	setenv("CLF_CONFIG", "/nonexistent/clf.conf", 1);
	ck_assert_int_eq(parse(&o, msg, "127.0.0.1:7100", "/m", NULL), -EINVAL);
	unsetenv("CLF_CONFIG");
	ck_assert_ptr_nonnull(strstr(msg, "secret_file="));
	ck_assert_ptr_nonnull(strstr(msg, "/nonexistent/clf.conf"));
	snprintf(opt, sizeof(opt), "secret_file=%s,iods=3", secret);
	ck_assert_int_eq(parse(&o, msg, "127.0.0.1:7100", "/m", "-o", opt,
			       NULL), 0);
	ck_assert_str_eq(o.metad, "127.0.0.1:7100");
	ck_assert_ptr_null(o.config);
	ck_assert_int_eq(o.iods, 3);
	ck_assert_int_eq(clfs_opts_write_config(&o, path, sizeof(path), msg,
						sizeof(msg)), 0);
	ck_assert_msg(clf_config_parse_file(path, &cfg) == 0, "%s",
		      CLF_Last_error());
	ck_assert_str_eq(cfg->metad.addr, "127.0.0.1:7100");
	ck_assert_int_eq(cfg->niods, 3);
	ck_assert_str_eq(cfg->iods[0].addr, "127.0.0.1:7101");
	ck_assert_str_eq(cfg->iods[2].addr, "127.0.0.1:7103");
	ck_assert(cfg->has_secret);
	clf_config_free(cfg);
	unlink(path);
	clfs_opts_release(&o);

	/* A secret file goes with HOST:PORT only. */
	snprintf(opt, sizeof(opt), "secret_file=%s", secret);
	ck_assert_int_eq(parse(&o, msg, conf, "/m", "-o", opt, NULL), -EINVAL);
	ck_assert_ptr_nonnull(strstr(msg, "HOST:PORT"));
}
END_TEST

START_TEST(test_opts_hostport_finds_the_secret_as_every_program_does)
{
	char msg[256], real_secret[PATH_MAX], real_conf[PATH_MAX];
	char found[160];
	struct clfs_opts o;
	FILE *f;

	/* An instance's file as `clf up` writes it, the secret beside. */
	snprintf(found, sizeof(found), "%s/found.conf", dir);
	f = fopen(found, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "[global]\nmetad = 127.0.0.1:7000\niod = 127.0.0.1:7001\n");
	fclose(f);
	ck_assert_ptr_nonnull(realpath(secret, real_secret));
	ck_assert_ptr_nonnull(realpath(found, real_conf));
	setenv("CLF_CONFIG", found, 1);
	/* Another metad: the secret `clf up` wrote beside the file. */
	ck_assert_msg(parse(&o, msg, "127.0.0.1:7100", "/m", NULL) == 0, "%s",
		      msg);
	ck_assert_str_eq(o.metad, "127.0.0.1:7100");
	ck_assert_str_eq(o.secret_file, real_secret);
	ck_assert_ptr_null(o.config);
	clfs_opts_release(&o);
	/* The file's own metad: the file is the configuration. */
	ck_assert_msg(parse(&o, msg, "127.0.0.1:7000", "/m", NULL) == 0, "%s",
		      msg);
	ck_assert_ptr_null(o.metad);
	ck_assert_str_eq(o.config, real_conf);
	clfs_opts_release(&o);
	unsetenv("CLF_CONFIG");
	unlink(found);
}
END_TEST

START_TEST(test_opts_refuse_what_they_do_not_know)
{
	struct clfs_opts o;
	char msg[256];

	ck_assert_int_eq(parse(&o, msg, conf, "/m", "-o", "bogus", NULL),
			 -EINVAL);
	ck_assert_str_eq(msg, "unknown option 'bogus'");
	ck_assert_int_eq(parse(&o, msg, conf, "/m", "-o", "cache=some", NULL),
			 -EINVAL);
	ck_assert_str_eq(msg, "cache=some: expected none or normal");
	ck_assert_int_eq(parse(&o, msg, conf, "/m", "-o", "iods=0", NULL),
			 -EINVAL);
	ck_assert_int_eq(parse(&o, msg, conf, NULL), -EINVAL);
	ck_assert_int_eq(parse(&o, msg, conf, "/m", "/x", NULL), -EINVAL);
	ck_assert_str_eq(msg, "unexpected argument '/x'");
	ck_assert_int_eq(parse(&o, msg, conf, "/m", "-q", NULL), -EINVAL);
	ck_assert_int_eq(parse(&o, msg, "/no/such.conf", "/m", NULL), -EINVAL);
	ck_assert_ptr_nonnull(strstr(msg, "/no/such.conf"));
}
END_TEST

START_TEST(test_opts_help_and_version_are_answers_not_errors)
{
	struct clfs_opts o;
	char msg[256];

	ck_assert_int_eq(parse(&o, msg, "--help", NULL), 0);
	ck_assert(o.answered);
	ck_assert_ptr_null(o.mountpoint);
	ck_assert_int_eq(parse(&o, msg, conf, "/m", "-V", NULL), 0);
	ck_assert(o.answered);
	ck_assert_int_eq(parse(&o, msg, conf, "/m", NULL), 0);
	ck_assert(!o.answered);
	clfs_opts_release(&o);
}
END_TEST

START_TEST(test_itable_counts_references_and_grows)
{
	struct clfs_itable t;
	struct clfs_inode *ip, *again;

	ck_assert_int_eq(clfs_itable_init(&t), 0);
	ip = clfs_iget(&t, 42);
	ck_assert_ptr_nonnull(ip);
	ck_assert_ptr_eq(clfs_iget(&t, 42), ip);
	clfs_iput(&t, ip);
	clfs_ilookup_ref(&t, ip);
	clfs_iput(&t, ip);
	/* The kernel's reference keeps it. */
	again = clfs_ifind(&t, 42);
	ck_assert_ptr_eq(again, ip);
	clfs_iput(&t, again);
	clfs_iforget(&t, 42, 1);
	ck_assert_ptr_null(clfs_ifind(&t, 42));
	clfs_iforget(&t, 43, 5);	/* unknown: nothing */

	/* Many inodes: the table grows and finds every one. */
	for (uint64_t i = 1; i <= 20000; i++) {
		ip = clfs_iget(&t, i * 7);
		ck_assert_ptr_nonnull(ip);
		clfs_ilookup_ref(&t, ip);
		clfs_iput(&t, ip);
	}
	ck_assert_uint_gt(t.table.nbuckets, 1024);
	ck_assert_uint_eq(t.table.count, 20000);
	for (uint64_t i = 1; i <= 20000; i++) {
		ip = clfs_ifind(&t, i * 7);
		ck_assert_ptr_nonnull(ip);
		ck_assert_uint_eq(ip->ino, i * 7);
		clfs_iput(&t, ip);
		clfs_iforget(&t, i * 7, 2);	/* more than it has */
	}
	ck_assert_uint_eq(t.table.count, 0);
	clfs_itable_destroy(&t);
}
END_TEST

static Suite *clfs_suite(void)
{
	Suite *s = suite_create("clfs");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_opts_config_source_and_mount_flags);
	tcase_add_test(tc, test_opts_fsname_escapes_commas);
	tcase_add_test(tc, test_opts_hostport_needs_secret_file_and_writes_a_config);
	tcase_add_test(tc, test_opts_hostport_finds_the_secret_as_every_program_does);
	tcase_add_test(tc, test_opts_refuse_what_they_do_not_know);
	tcase_add_test(tc, test_opts_help_and_version_are_answers_not_errors);
	tcase_add_test(tc, test_itable_counts_references_and_grows);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(clfs_suite());
}
