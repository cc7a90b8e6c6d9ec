// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_config.c -- the configuration file: good files in both spellings,
 * bad files whose errors must name the line, the built-in default and its
 * environment overrides, and writing a file back.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check_main.h"
#include "clf.h"
#include "config.h"
#include "transport.h"

#define HEX "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

static char dir[64];
static char path[PATH_MAX];

/* A fresh directory per test (Check runs each test in its own process). */
static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/clf-test-config-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/clf.conf", dir);
	unsetenv("CLF_CONFIG");
	unsetenv("CLF_BASE_PORT");
	unsetenv("CLF_DATA_DIR");
	unsetenv("CLF_TEST_SYSCONFDIR");
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
}

static void write_file(const char *p, const char *text, mode_t mode)
{
	FILE *f = fopen(p, "w");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_ge(fputs(text, f), 0);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(chmod(p, mode), 0);
}

static struct clf_config *parse_ok(const char *text)
{
	struct clf_config *cfg = NULL;

	write_file(path, text, 0600);
	ck_assert_msg(clf_config_parse_file(path, &cfg) == 0, "%s",
		      CLF_Last_error());
	return cfg;
}

/* Parse text; it must fail with err and a message with want in it. */
static void parse_fails(const char *text, int err, const char *want)
{
	struct clf_config *cfg = NULL;

	write_file(path, text, 0600);
	ck_assert_int_eq(clf_config_parse_file(path, &cfg), err);
	ck_assert_ptr_null(cfg);
	ck_assert_msg(strstr(CLF_Last_error(), want) != NULL,
		      "message '%s' lacks '%s'", CLF_Last_error(), want);
	ck_assert_msg(strstr(CLF_Last_error(), path) != NULL,
		      "message '%s' lacks the file name", CLF_Last_error());
}

static char *in_dir(const char *sub)
{
	static char buf[PATH_MAX];

	snprintf(buf, sizeof(buf), "%s/%s", dir, sub);
	return buf;
}

START_TEST(test_parses_a_complete_file_with_sections)
{
	struct clf_config *cfg = parse_ok(
		"; a test instance\n"
		"[global]\n"
		"secret = " HEX "\n"
		"stripe_size = 1m          ; per stripe\n"
		"stripe_count = 2\n"
		"first_iod = 1\n"
		"timeout_ms = 750\n"
		"recovery_grace_s = 7\n"
		"data_dir = ./data\n"
		"transport = tcp\n"
		"\n"
		"[metad]\n"
		"address = 127.0.0.1:7100\n"
		"dir = meta-here\n"
		"[iod]\n"
		"address = 127.0.0.1:7101\n"
		"dir = /srv/iod0\n"
		"[iod]\n"
		"address = [::1]:7102\n"
		"[iod]\n"
		"dir = later\n"
		"address = localhost:7103\n");

	ck_assert(cfg->has_secret);
	ck_assert_uint_eq(cfg->secret.len, 32);
	ck_assert_uint_eq(cfg->secret.key[1], 0x11);
	ck_assert_int_eq(cfg->stripe_size, 1 << 20);
	ck_assert_uint_eq(cfg->stripe_count, 2);
	ck_assert_uint_eq(cfg->first_iod, 1);
	ck_assert_int_eq(cfg->timeout_ms, 750);
	ck_assert_int_eq(cfg->recovery_grace_s, 7);
	ck_assert_str_eq(cfg->transport, "tcp");
	ck_assert_str_eq(cfg->source, path);
	ck_assert_str_eq(cfg->data_dir, in_dir("data"));
	ck_assert_str_eq(cfg->metad.addr, "127.0.0.1:7100");
	ck_assert_str_eq(cfg->metad.dir, in_dir("meta-here"));
	ck_assert_int_eq(cfg->metad.line, 12);
	ck_assert_uint_eq(cfg->niods, 3);
	ck_assert_str_eq(cfg->iods[0].dir, "/srv/iod0");
	ck_assert_str_eq(cfg->iods[1].addr, "[::1]:7102");
	ck_assert_str_eq(cfg->iods[1].host, "::1");
	ck_assert_str_eq(cfg->iods[1].port, "7102");
	ck_assert_str_eq(cfg->iods[1].dir, in_dir("data/iod1"));
	ck_assert_str_eq(cfg->iods[2].addr, "localhost:7103");
	ck_assert_str_eq(cfg->iods[2].dir, in_dir("later"));
	ck_assert_int_eq(cfg->iods[2].line, 20);
	clf_config_free(cfg);
}
END_TEST

START_TEST(test_parses_daemon_specs_in_global)
{
	struct clf_config *cfg = parse_ok(
		"stripe_size = 64k\n"
		"metad = 127.0.0.1:7000:/meta\n"
		"iod = 127.0.0.1:7001:/data/a:b\n"
		"iod = [::1]:7002:rel\n"
		"iod = 127.0.0.1:7003\n");

	ck_assert(!cfg->has_secret);
	ck_assert_int_eq(cfg->stripe_size, 65536);
	ck_assert_str_eq(cfg->metad.dir, "/meta");
	ck_assert_uint_eq(cfg->niods, 3);
	ck_assert_uint_eq(cfg->stripe_count, 3);	/* default: all iods */
	ck_assert_str_eq(cfg->iods[0].dir, "/data/a:b");
	ck_assert_str_eq(cfg->iods[1].host, "::1");
	ck_assert_str_eq(cfg->iods[1].dir, in_dir("rel"));
	ck_assert_str_eq(cfg->iods[2].dir, in_dir("clf-data/iod2"));
	ck_assert_int_eq(cfg->iods[2].line, 5);
	clf_config_free(cfg);
}
END_TEST

/* Several metads: their order gives their index; metad stays the
 * first; a metad picks its own with clf_config_select_metad. */
START_TEST(test_several_metads_spread_the_namespace_in_their_order)
{
	struct clf_config *cfg = parse_ok(
		"metad = 127.0.0.1:7000:/meta\n"
		"iod = 127.0.0.1:7001\n"
		"[metad]\naddress = 127.0.0.1:7002\n"
		"[metad]\naddress = 127.0.0.1:7003\ndir = /m2\n");

	ck_assert_uint_eq(cfg->nmetads, 3);
	ck_assert_str_eq(cfg->metad.addr, "127.0.0.1:7000");
	ck_assert_str_eq(cfg->metads[0].dir, "/meta");
	ck_assert_str_eq(cfg->metads[1].addr, "127.0.0.1:7002");
	ck_assert_str_eq(cfg->metads[1].dir, in_dir("clf-data/meta1"));
	ck_assert_str_eq(cfg->metads[2].dir, "/m2");
	ck_assert_int_eq(clf_config_select_metad(cfg, 2), 0);
	ck_assert_str_eq(cfg->metad.addr, "127.0.0.1:7003");
	ck_assert_str_eq(cfg->metad.dir, "/m2");
	ck_assert_int_eq(clf_config_select_metad(cfg, 3), -EINVAL);
	clf_config_free(cfg);
}
END_TEST

#define BASE "[metad]\naddress = 127.0.0.1:7000\n[iod]\naddress = 127.0.0.1:7001\n"

START_TEST(test_errors_name_the_file_and_line)
{
	char *p;

	parse_fails("[global]\nstripe_size = 64q\n" BASE, -EINVAL,
		    ":2: stripe_size: '64q' is not a size");
	parse_fails(BASE "[global]\nfoo = 1\n", -EINVAL,
		    ":6: unknown key 'foo' in [global]");
	parse_fails(BASE "[iod]\naddress = 127.0.0.1:7002\nsecret = " HEX "\n",
		    -EINVAL, ":7: unknown key 'secret' in [iod]");
	parse_fails("[nfs]\nx = 1\n", -EINVAL, ":1: unknown section [nfs]");
	parse_fails(BASE "this line has no equals sign\n", -EINVAL,
		    ":5: syntax error");
	parse_fails("timeout_ms = 5\ntimeout_ms = 6\n" BASE, -EINVAL,
		    ":2: 'timeout_ms' given twice (first on line 1)");
	parse_fails("secret = 0011\n" BASE, -EINVAL,
		    ":1: secret: secret: 2 bytes, must be 16 to 64");
	parse_fails("secret = " HEX "\nsecret_file = x\n" BASE, -EINVAL,
		    ":2: give secret or secret_file, not both");
	parse_fails("stripe_count = 3\n" BASE, -EINVAL,
		    ":1: stripe_count 3 exceeds the 1 iods configured");
	parse_fails("first_iod = 1\n" BASE, -EINVAL,
		    ":1: first_iod 1: iods are numbered 0 to 0");
	parse_fails(BASE "[iod]\naddress = 127.0.0.1:7001\n", -EINVAL,
		    ":5: address 127.0.0.1:7001 is iod 0's (line 3)");
	parse_fails("[iod]\naddress = 127.0.0.1:7001\n", -EINVAL,
		    ": no metad");
	parse_fails("[metad]\naddress = 127.0.0.1:7000\n", -EINVAL,
		    ": no iod");
	parse_fails(BASE "[iod]\n\n[iod]\naddress = 127.0.0.1:7002\n", -EINVAL,
		    ":5: [iod] section without an address");
	parse_fails(BASE "[iod]\ndir = /x\n", -EINVAL,
		    ":5: [iod] section without an address");
	parse_fails(BASE "[iod]\naddress = 127.0.0.1:70000\n", -EINVAL,
		    ":6: address '127.0.0.1:70000': port '70000' is not a number");
	parse_fails(BASE "[iod]\naddress = ::1:7002\n", -EINVAL,
		    ":6: address '::1:7002': write IPv6 addresses as [addr]:port");
	parse_fails("transport = pigeon\n" BASE, -EINVAL,
		    ":1: transport: 'pigeon' is not built in");
	parse_fails("timeout_ms = 0\n" BASE, -EINVAL,
		    ":1: timeout_ms: '0' is not a whole number of milliseconds");
	parse_fails("recovery_grace_s = -1\n" BASE, -EINVAL,
		    ":1: recovery_grace_s: '-1' is not a whole number of seconds");
	parse_fails("recovery_grace_s = 601\n" BASE, -EINVAL,
		    ":1: recovery_grace_s: '601' is not a whole number of seconds from 0 to 600");
	parse_fails("[metad]\naddress = 127.0.0.1:7000\n[metad]\n"
		    "address = 127.0.0.1:7000\n[iod]\naddress = 127.0.0.1:7001\n",
		    -EINVAL, ":3: address 127.0.0.1:7000 is metad 0's (line 1)");

	p = malloc(400);
	ck_assert_ptr_nonnull(p);
	snprintf(p, 400, BASE "data_dir = /%0250d\n", 0);
	parse_fails(p, -E2BIG, ":5: line longer than 198 characters");
	free(p);
}
END_TEST

START_TEST(test_secret_file_is_relative_to_the_config_file)
{
	struct clf_config *cfg;

	write_file(in_dir("key"), HEX "\n", 0600);
	cfg = parse_ok("secret_file = key\n" BASE);
	ck_assert(cfg->has_secret);
	ck_assert_str_eq(cfg->secret_file, in_dir("key"));
	ck_assert_uint_eq(cfg->secret.key[31], 0xff);
	clf_config_free(cfg);

	write_file(in_dir("key"), HEX "\n", 0644);
	parse_fails("secret_file = key\n" BASE, -EACCES,
		    ":1: secret_file: secret file");
}
END_TEST

/* An inline secret in a readable configuration is refused as a readable
 * secret_file is, with the fix in the message. */
START_TEST(test_inline_secret_in_a_readable_config_is_refused)
{
	struct clf_config *cfg = NULL;

	write_file(path, "secret = " HEX "\n" BASE, 0644);
	ck_assert_int_eq(clf_config_parse_file(path, &cfg), -EACCES);
	ck_assert_ptr_null(cfg);
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(), ":1: secret:"));
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(), "chmod 600"));
	write_file(path, "secret = " HEX "\n" BASE, 0640);
	ck_assert_int_eq(clf_config_parse_file(path, &cfg), -EACCES);
	write_file(path, "secret = " HEX "\n" BASE, 0600);
	ck_assert_int_eq(clf_config_parse_file(path, &cfg), 0);
	clf_config_free(cfg);
}
END_TEST

START_TEST(test_missing_file_says_so)
{
	struct clf_config *cfg = NULL;

	ck_assert_int_eq(clf_config_parse_file(in_dir("nope.conf"), &cfg),
			 -ENOENT);
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(), "nope.conf"));
}
END_TEST

START_TEST(test_built_in_default_is_one_metad_and_four_iods_on_loopback)
{
	struct clf_config *cfg;
	char cwd[PATH_MAX], want[PATH_MAX + 32];

	char old[PATH_MAX];

	ck_assert_ptr_nonnull(getcwd(old, sizeof(old)));
	ck_assert_int_eq(chdir(dir), 0);
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
	ck_assert_int_eq(clf_config_default(&cfg), 0);
	ck_assert_int_eq(chdir(old), 0);
	ck_assert(!cfg->has_secret);
	ck_assert_ptr_null(cfg->source);
	ck_assert_str_eq(cfg->metad.addr, "127.0.0.1:7000");
	ck_assert_uint_eq(cfg->niods, 4);
	ck_assert_str_eq(cfg->iods[0].addr, "127.0.0.1:7001");
	ck_assert_str_eq(cfg->iods[3].addr, "127.0.0.1:7004");
	ck_assert_str_eq(cfg->iods[3].port, "7004");
	ck_assert_uint_eq(cfg->stripe_count, 4);
	ck_assert_int_eq(cfg->stripe_size, 64 * 1024);
	ck_assert_int_eq(cfg->timeout_ms, CLF_CONN_DEFAULT_TIMEOUT_MS);
	ck_assert_int_eq(cfg->recovery_grace_s, CLF_CONFIG_DEFAULT_GRACE_S);
	snprintf(want, sizeof(want), "%s/clf-data", cwd);
	ck_assert_str_eq(cfg->data_dir, want);
	snprintf(want, sizeof(want), "%s/clf-data/iod2", cwd);
	ck_assert_str_eq(cfg->iods[2].dir, want);
	clf_config_free(cfg);
}
END_TEST

START_TEST(test_env_overrides_base_port_and_data_dir)
{
	struct clf_config *cfg;

	setenv("CLF_BASE_PORT", "9100", 1);
	setenv("CLF_DATA_DIR", dir, 1);
	ck_assert_int_eq(clf_config_default(&cfg), 0);
	ck_assert_str_eq(cfg->metad.addr, "127.0.0.1:9100");
	ck_assert_str_eq(cfg->iods[3].addr, "127.0.0.1:9104");
	ck_assert_str_eq(cfg->data_dir, dir);
	ck_assert_str_eq(cfg->metad.dir, in_dir("meta"));
	clf_config_free(cfg);

	setenv("CLF_BASE_PORT", "65534", 1);
	ck_assert_int_eq(clf_config_default(&cfg), -EINVAL);
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(), "CLF_BASE_PORT='65534'"));
	setenv("CLF_BASE_PORT", "70x", 1);
	ck_assert_int_eq(clf_config_default(&cfg), -EINVAL);
}
END_TEST

START_TEST(test_load_prefers_path_then_env_then_data_dir_then_sysconf)
{
	struct clf_config *cfg;
	char other[PATH_MAX], etc[PATH_MAX], sys[PATH_MAX + 32];
	char found[PATH_MAX + 32];

	/* Nothing anywhere: an error naming every place tried. */
	snprintf(etc, sizeof(etc), "%s", in_dir("etc"));
	setenv("CLF_TEST_SYSCONFDIR", etc, 1);
	setenv("CLF_DATA_DIR", dir, 1);
	ck_assert_int_eq(clf_config_load(NULL, &cfg), -ENOENT);
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(), "$CLF_CONFIG"));
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(), path));
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(), "/etc/clf/clf.conf"));

	/* The system-wide file, <sysconfdir>/clf/clf.conf. */
	ck_assert_int_eq(mkdir(etc, 0755), 0);
	snprintf(sys, sizeof(sys), "%s/clf", etc);
	ck_assert_int_eq(mkdir(sys, 0755), 0);
	snprintf(sys, sizeof(sys), "%s/clf/clf.conf", etc);
	write_file(sys, "timeout_ms = 33\n" BASE, 0600);
	ck_assert_int_eq(clf_config_find(NULL, found, sizeof(found)), 0);
	ck_assert_str_eq(found, sys);
	ck_assert_int_eq(clf_config_load(NULL, &cfg), 0);
	ck_assert_int_eq(cfg->timeout_ms, 33);
	clf_config_free(cfg);

	/* The data directory's file before it. */
	write_file(path, "timeout_ms = 11\n" BASE, 0600);	/* dir/clf.conf */
	ck_assert_int_eq(clf_config_load(NULL, &cfg), 0);
	ck_assert_int_eq(cfg->timeout_ms, 11);
	clf_config_free(cfg);

	snprintf(other, sizeof(other), "%s", in_dir("other.conf"));
	write_file(other, "timeout_ms = 22\n" BASE, 0600);
	setenv("CLF_CONFIG", other, 1);
	ck_assert_int_eq(clf_config_load(NULL, &cfg), 0);
	ck_assert_int_eq(cfg->timeout_ms, 22);
	clf_config_free(cfg);

	ck_assert_int_eq(clf_config_load(path, &cfg), 0);
	ck_assert_int_eq(cfg->timeout_ms, 11);
	clf_config_free(cfg);

	setenv("CLF_CONFIG", in_dir("missing.conf"), 1);
	ck_assert_int_eq(clf_config_load(NULL, &cfg), -ENOENT);
}
END_TEST

START_TEST(test_written_file_loads_back_and_is_private)
{
	struct clf_config *cfg, *back;
	struct clf_secret s;
	struct stat st;

	setenv("CLF_DATA_DIR", dir, 1);
	setenv("CLF_BASE_PORT", "8200", 1);
	ck_assert_int_eq(clf_config_default(&cfg), 0);
	ck_assert_int_eq(clf_secret_generate(&s), 0);
	clf_config_set_secret(cfg, &s);
	cfg->stripe_size = 3 << 20;
	cfg->iod_buffer_memory = (int64_t)3 << 30;
	ck_assert_int_eq(clf_config_write(cfg, path), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0600);

	ck_assert_msg(clf_config_parse_file(path, &back) == 0, "%s",
		      CLF_Last_error());
	ck_assert(back->has_secret);
	ck_assert_uint_eq(back->secret.len, s.len);
	ck_assert_mem_eq(back->secret.key, s.key, s.len);
	ck_assert_int_eq(back->stripe_size, 3 << 20);
	ck_assert_int_eq(back->iod_buffer_memory, (int64_t)3 << 30);
	ck_assert_int_eq(back->iod_view_memory, 0);
	ck_assert_uint_eq(back->niods, cfg->niods);
	ck_assert_str_eq(back->metad.addr, "127.0.0.1:8200");
	ck_assert_str_eq(back->iods[3].addr, cfg->iods[3].addr);
	ck_assert_str_eq(back->iods[3].dir, cfg->iods[3].dir);
	ck_assert_str_eq(back->data_dir, cfg->data_dir);
	clf_config_free(back);
	clf_config_free(cfg);
}
END_TEST

START_TEST(test_iod_memory_keys_take_sizes)
{
	struct clf_config *cfg = parse_ok(
		"iod_view_memory = 64m\niod_view_min_share = 1m\n"
		"iod_buffer_memory = 2g\niod_buffer_min_share = 128m\n" BASE);

	ck_assert_int_eq(cfg->iod_view_memory, 64 << 20);
	ck_assert_int_eq(cfg->iod_view_min_share, 1 << 20);
	ck_assert_int_eq(cfg->iod_buffer_memory, (int64_t)2 << 30);
	ck_assert_int_eq(cfg->iod_buffer_min_share, 128 << 20);
	clf_config_free(cfg);
	parse_fails("iod_view_memory = 12\n" BASE, -EINVAL,
		    "iod_view_memory: '12' is not a size from 64k");
}
END_TEST

START_TEST(test_daemon_workers_is_a_count_or_zero_for_the_default)
{
	struct clf_config *cfg = parse_ok(BASE);

	ck_assert_int_eq(cfg->daemon_workers, 0);
	clf_config_free(cfg);
	cfg = parse_ok("daemon_workers = 12\n" BASE);
	ck_assert_int_eq(cfg->daemon_workers, 12);
	clf_config_free(cfg);
	parse_fails("daemon_workers = 5000\n" BASE, -EINVAL,
		    "daemon_workers: '5000' is not a whole number from 0");
	parse_fails("daemon_workers = many\n" BASE, -EINVAL,
		    "daemon_workers: 'many' is not a whole number");
}
END_TEST

START_TEST(test_backing_is_relative_to_the_file_and_written_back)
{
	struct clf_config *cfg = parse_ok(BASE), *back;

	ck_assert_ptr_null(cfg->backing);
	clf_config_free(cfg);
	cfg = parse_ok("backing = ./persist\n" BASE);
	ck_assert_str_eq(cfg->backing, in_dir("persist"));
	ck_assert_int_eq(clf_config_write(cfg, path), 0);
	ck_assert_msg(clf_config_parse_file(path, &back) == 0, "%s",
		      CLF_Last_error());
	ck_assert_str_eq(back->backing, in_dir("persist"));
	clf_config_free(back);
	clf_config_free(cfg);
	parse_fails("backing =\n" BASE, -EINVAL, "backing: empty");
}
END_TEST

START_TEST(test_parse_size_takes_binary_suffixes)
{
	int64_t v;

	ck_assert_int_eq(clf_parse_size("64k", &v), 0);
	ck_assert_int_eq(v, 65536);
	ck_assert_int_eq(clf_parse_size("2G", &v), 0);
	ck_assert_int_eq(v, 2LL << 30);
	ck_assert_int_eq(clf_parse_size("12", &v), 0);
	ck_assert_int_eq(v, 12);
	ck_assert_int_eq(clf_parse_size("k", &v), -EINVAL);
	ck_assert_int_eq(clf_parse_size("1x", &v), -EINVAL);
	ck_assert_int_eq(clf_parse_size("-1", &v), -EINVAL);
	ck_assert_int_eq(clf_parse_size("1 k", &v), -EINVAL);
	ck_assert_int_eq(clf_parse_size("99999999999t", &v), -ERANGE);
}
END_TEST

START_TEST(test_url_names_metad_and_a_path)
{
	char addr[CLF_ADDR_MAX];
	const char *rest;

	ck_assert_int_eq(clf_url_parse("clf://h.example:7100/a/b", addr,
				       sizeof(addr), &rest), 1);
	ck_assert_str_eq(addr, "h.example:7100");
	ck_assert_str_eq(rest, "/a/b");
	/* No port: metad's default; no path: the root. */
	ck_assert_int_eq(clf_url_parse("clf://10.0.0.2", addr, sizeof(addr),
				       &rest), 1);
	ck_assert_str_eq(addr, "10.0.0.2:7000");
	ck_assert_str_eq(rest, "");
	ck_assert_int_eq(clf_url_parse("clf://[::1]:7005/x", addr,
				       sizeof(addr), &rest), 1);
	ck_assert_str_eq(addr, "[::1]:7005");
	ck_assert_str_eq(rest, "/x");
	ck_assert_int_eq(clf_url_parse("clf://[::1]/x", addr, sizeof(addr),
				       &rest), 1);
	ck_assert_str_eq(addr, "[::1]:7000");
	/* Not URLs: nothing written. */
	ck_assert_int_eq(clf_url_parse("clf:/a", addr, sizeof(addr), &rest), 0);
	ck_assert_int_eq(clf_url_parse("/a", addr, sizeof(addr), &rest), 0);
	ck_assert_int_eq(clf_url_parse(NULL, addr, sizeof(addr), &rest), 0);
	/* Malformed. */
	ck_assert_int_eq(clf_url_parse("clf:///a", addr, sizeof(addr), &rest),
			 -EINVAL);
	ck_assert_int_eq(clf_url_parse("clf://h:0/a", addr, sizeof(addr),
				       &rest), -EINVAL);
	ck_assert_int_eq(clf_url_parse("clf://h:99999", addr, sizeof(addr),
				       &rest), -EINVAL);
	ck_assert_int_eq(clf_url_parse("clf://:7000/a", addr, sizeof(addr),
				       &rest), -EINVAL);
	ck_assert_int_eq(clf_url_parse("clf://h:x/a", addr, sizeof(addr),
				       &rest), -EINVAL);
}
END_TEST

START_TEST(test_config_for_metad_reads_the_secret_of_clf_secret_file)
{
	struct clf_config *cfg;
	const char *secret = in_dir("secret");

	unsetenv("CLF_SECRET_FILE");
	ck_assert_int_eq(clf_config_for_metad("10.0.0.2:7000", &cfg), 0);
	ck_assert_str_eq(cfg->metad.addr, "10.0.0.2:7000");
	ck_assert_uint_eq(cfg->niods, 0);
	ck_assert(!cfg->has_secret);
	ck_assert(clf_config_uses_munge(cfg));
	clf_config_free(cfg);

	write_file(secret, "00112233445566778899aabbccddeeff\n", 0600);
	setenv("CLF_SECRET_FILE", secret, 1);
	ck_assert_int_eq(clf_config_for_metad("10.0.0.2:7000", &cfg), 0);
	ck_assert(cfg->has_secret);
	ck_assert(!clf_config_uses_munge(cfg));
	clf_config_free(cfg);
	/* Open to others: refused, as every secret file is. */
	ck_assert_int_eq(chmod(secret, 0644), 0);
	ck_assert_int_eq(clf_config_for_metad("10.0.0.2:7000", &cfg), -EACCES);
	unsetenv("CLF_SECRET_FILE");
}
END_TEST

/* INSTANCE of 1.17 names the metads: metad 0 keeps the address the
 * client was named by; a reply from another metad than 0 is refused. */
START_TEST(test_set_instance_takes_the_metads_instance_names)
{
	static const struct clf_proto_iod_addr iods[] = {
		{ { "10.0.0.9:7001", 13 } },
	};
	static const struct clf_proto_iod_addr metads[] = {
		{ { "192.168.1.5:7000", 16 } }, { { "10.0.0.7:7010", 13 } },
		{ { "[::1]:7011", 10 } },
	};
	struct clf_proto_instance m = {
		65536, 1, 0, 5000, 30, 1, (struct clf_proto_iod_addr *)iods,
		true, 0, 3, (struct clf_proto_iod_addr *)metads,
	};
	struct clf_config *cfg;

	unsetenv("CLF_SECRET_FILE");
	ck_assert_int_eq(clf_config_for_metad("10.0.0.2:7000", &cfg), 0);
	ck_assert_int_eq(clf_config_set_instance(cfg, &m), 0);
	ck_assert_uint_eq(cfg->nmetads, 3);
	ck_assert_str_eq(cfg->metads[0].addr, "10.0.0.2:7000");
	ck_assert_str_eq(cfg->metads[1].addr, "10.0.0.7:7010");
	ck_assert_str_eq(cfg->metads[2].host, "::1");
	ck_assert_str_eq(cfg->metads[2].port, "7011");
	ck_assert_uint_eq(cfg->niods, 1);
	clf_config_free(cfg);

	/* A 1.16 reply: the one metad. */
	m.has_metads = false;
	ck_assert_int_eq(clf_config_for_metad("10.0.0.2:7000", &cfg), 0);
	ck_assert_int_eq(clf_config_set_instance(cfg, &m), 0);
	ck_assert_uint_eq(cfg->nmetads, 1);
	clf_config_free(cfg);

	m.has_metads = true;
	m.metad_index = 1;
	ck_assert_int_eq(clf_config_for_metad("10.0.0.7:7010", &cfg), 0);
	ck_assert_int_eq(clf_config_set_instance(cfg, &m), -EINVAL);
	ck_assert_ptr_nonnull(strstr(CLF_Last_error(), "192.168.1.5:7000"));
	clf_config_free(cfg);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("config");
	TCase *tc = tcase_create("config");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_parses_a_complete_file_with_sections);
	tcase_add_test(tc, test_set_instance_takes_the_metads_instance_names);
	tcase_add_test(tc, test_parses_daemon_specs_in_global);
	tcase_add_test(tc, test_errors_name_the_file_and_line);
	tcase_add_test(tc, test_secret_file_is_relative_to_the_config_file);
	tcase_add_test(tc, test_inline_secret_in_a_readable_config_is_refused);
	tcase_add_test(tc, test_missing_file_says_so);
	tcase_add_test(tc, test_iod_memory_keys_take_sizes);
	tcase_add_test(tc, test_backing_is_relative_to_the_file_and_written_back);
	tcase_add_test(tc,
		test_built_in_default_is_one_metad_and_four_iods_on_loopback);
	tcase_add_test(tc, test_env_overrides_base_port_and_data_dir);
	tcase_add_test(tc,
		test_load_prefers_path_then_env_then_data_dir_then_sysconf);
	tcase_add_test(tc, test_written_file_loads_back_and_is_private);
	tcase_add_test(tc, test_several_metads_spread_the_namespace_in_their_order);
	tcase_add_test(tc, test_parse_size_takes_binary_suffixes);
	tcase_add_test(tc, test_url_names_metad_and_a_path);
	tcase_add_test(tc,
		test_config_for_metad_reads_the_secret_of_clf_secret_file);
	tcase_add_test(tc,
		test_daemon_workers_is_a_count_or_zero_for_the_default);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
