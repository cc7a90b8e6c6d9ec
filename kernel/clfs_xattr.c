// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * clfs_xattr.c -- the extended attribute user.clf.layout, and the
 * default layouts of directories.
 *
 * A file's layout is metad's: read with GET_LAYOUT and written as text
 * (libclf/engine/layout_text.h); set with SET_LAYOUT while the file is empty,
 * after which every open handle of the file is switched to it.
 *
 * metad keeps no extended attributes, so a directory's default layout
 * is the text in a hidden file of the directory, ".clf-default-layout"
 * (one line), which lives as long as the directory: no metad change, it
 * survives restarts and is visible to every client, including the
 * native API and the clf command line (libclf/client/clf_ll.h reads and
 * writes it for all of them).  The mount hides the name; rmdir removes
 * the file with the directory.  Each mount caches the text per
 * directory for CLFS_DEFAULT_LAYOUT_TTL.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>

#include "clf.h"
#include "clf_ll.h"
#include "clock.h"
#include "clfs_i.h"
#include "clfs_log.h"

/* Is ino a directory?  1 yes, 0 no, or a negative errno. */
static int is_dir(struct clfs *fs, uint64_t ino)
{
	struct clf_proto_attr a;
	struct clfs_inode *ip = clfs_ifind(&fs->itab, ino);
	int err;

	if (ip) {
		int dir;

		pthread_mutex_lock(&ip->lock);
		dir = ip->have_attr ? ip->is_dir : -1;
		pthread_mutex_unlock(&ip->lock);
		clfs_iput(&fs->itab, ip);
		if (dir >= 0)
			return dir;
	}
	err = clf_ll_getattr(ino, &a);
	return err ? err : S_ISDIR(a.mode);
}

/* Copy len bytes out as getxattr/listxattr do. */
static ssize_t give(const char *val, size_t len, void *buf, size_t size)
{
	if (size == 0)
		return (ssize_t)len;
	if (size < len)
		return -ERANGE;
	memcpy(buf, val, len);
	return (ssize_t)len;
}

/* The layout of file ino as text (caller frees). */
static int file_layout_text(uint64_t ino, char **text)
{
	struct clf_layout_info info;
	int err = clf_ll_get_layout(ino, &info);

	if (err)
		return err;
	err = clf_layout_text_format(info.disp, info.count, info.types,
				     info.iods, clf_ll_niods(), text);
	CLF_Layout_release(&info);
	return err;
}

/*
 * Read the hidden file of dir (clf_ll.h): its text, or NULL; caller
 * frees.  One too long to be a layout is ignored, as if absent.
 */
static int read_default(uint64_t dir, char **text)
{
	int err = clf_ll_dir_default_read(dir, text);

	if (err == -EFBIG) {
		clfs_log(CLFS_LOG_WARNING, "%s: ignoring it", CLF_Last_error());
		*text = NULL;
		err = 0;
	}
	return err;
}

/* Remember text (copied; NULL: none) as dir's default.  ip->lock. */
static int cache_default(struct clfs_inode *ip, const char *text)
{
	char *copy = NULL;

	if (text && !(copy = strdup(text)))
		return -ENOMEM;
	free(ip->dflt);
	ip->dflt = copy;
	ip->dflt_read_ns = clf_wall_ns();
	return 0;
}

int clfs_dir_default(struct clfs *fs, uint64_t dir, char **text)
{
	struct clfs_inode *ip = clfs_iget(&fs->itab, dir);
	int64_t now = clf_wall_ns();
	char *got = NULL;
	int err = 0;

	if (!ip)
		return -ENOMEM;
	pthread_mutex_lock(&ip->lock);
	if (!ip->dflt_read_ns ||
	    now - ip->dflt_read_ns >= CLFS_DEFAULT_LAYOUT_TTL) {
		err = read_default(dir, &got);
		if (!err)
			err = cache_default(ip, got);
		free(got);
	}
	*text = NULL;
	if (!err && ip->dflt && !(*text = strdup(ip->dflt)))
		err = -ENOMEM;
	pthread_mutex_unlock(&ip->lock);
	clfs_iput(&fs->itab, ip);
	return err;
}

int clfs_dir_set_default(struct clfs *fs, const struct clfs_caller *who,
			 uint64_t dir, const char *text)
{
	struct clfs_inode *ip = clfs_iget(&fs->itab, dir);
	int err;

	if (!ip)
		return -ENOMEM;
	pthread_mutex_lock(&ip->lock);
	if (text) {
		struct clf_ll_owner owner = { who ? who->uid : 0,
					      who ? who->gid : 0 };

		err = clf_ll_dir_default_write(dir, &owner, text);
	} else {
		err = clf_ll_dir_default_remove(dir);
		if (err == -ENOENT)
			err = -ENODATA;
	}
	if (!err)
		err = cache_default(ip, text);
	else
		ip->dflt_read_ns = 0;	/* unsure: read it again */
	pthread_mutex_unlock(&ip->lock);
	clfs_iput(&fs->itab, ip);
	return err;
}

int clfs_dir_drop_hidden(struct clfs *fs, uint64_t dir)
{
	struct clf_ll_dirents d;
	bool only;
	int err;

	err = clf_ll_readdir(dir, 0, 2, &d);
	if (err)
		return err;
	only = d.rep.eof && d.rep.count == 1 &&
	       clf_proto_str_eq(d.rep.ents[0].name, CLFS_DEFAULT_LAYOUT_NAME);
	clf_ll_dirents_release(&d);
	if (!only)
		return 0;
	err = clfs_dir_set_default(fs, NULL, dir, NULL);
	return err ? err : 1;
}

ssize_t clfs_getxattr(struct clfs *fs, uint64_t ino, const char *name,
		      void *buf, size_t size)
{
	char *text = NULL;
	ssize_t ret;
	int dir;

	if (strcmp(name, CLFS_LAYOUT_XATTR))
		return -ENODATA;
	dir = is_dir(fs, ino);
	if (dir < 0)
		return dir;
	ret = dir ? clfs_dir_default(fs, ino, &text)
		  : file_layout_text(ino, &text);
	if (!ret && !text)
		ret = -ENODATA;
	if (!ret)
		ret = give(text, strlen(text), buf, size);
	free(text);
	return ret;
}

/*
 * Does file ino have the layout desc already?  1 yes, 0 no (or it
 * cannot tell): both written as text.  A desc that names its first iod
 * is placed from there; one that names none leaves the placement to
 * metad (which skips retired iods), so any placement of the file's own
 * matches it.  cp --preserve=xattr and cp -a set the layout after the
 * data: the same layout then is no change, not a refusal.
 */
static int same_layout(uint64_t ino, const struct clf_layout_desc *desc)
{
	const struct clf_config *cfg;
	struct clf_layout_info info;
	char *have = NULL, *want = NULL;
	int *iods, niods, same = 0;

	if (clf_ll_config(&cfg) || clf_ll_get_layout(ino, &info))
		return 0;
	niods = (int)cfg->niods;
	iods = calloc(desc->count, sizeof(*iods));
	if (!iods || (desc->first_iod < 0 && info.count != desc->count))
		goto out;
	for (int j = 0; j < desc->count; j++)
		iods[j] = desc->first_iod < 0 ? info.iods[j]
			: (int)(((uint32_t)desc->first_iod + (uint32_t)j) %
				(uint32_t)niods);
	if (!clf_layout_text_format(desc->disp, desc->count, desc->types, iods,
				    niods, &want) &&
	    !clf_layout_text_format(info.disp, info.count, info.types,
				    info.iods, niods, &have))
		same = !strcmp(have, want);
out:
	CLF_Layout_release(&info);
	free(have);
	free(want);
	free(iods);
	return same;
}

/*
 * The bytes of a file the mount rewrites to give it another layout:
 * cp -a and cp --preserve=xattr set user.clf.layout after the data, on
 * a file this small that costs one more copy; a larger one keeps its
 * layout (EBUSY, logged).
 */
#define CLFS_RELAYOUT_MAX (64 << 20)

/* Move every byte of fd from or to buf: 0 or a negative errno. */
static int move_all(int fd, char *buf, int64_t len, bool write_it)
{
	int64_t done = 0;

	if (CLF_lseek(fd, 0, SEEK_SET) < 0)
		return -EIO;
	while (done < len) {
		ssize_t n = write_it ? CLF_write(fd, buf + done, len - done)
				     : CLF_read(fd, buf + done, len - done);

		if (n < 0)
			return (int)n;
		if (n == 0)
			return write_it ? -EIO : -ENODATA;
		done += n;
	}
	return 0;
}

/*
 * Give the file ino of size bytes (> 0) the layout desc by rewriting
 * it: its open handles report their bytes first, then a descriptor of
 * our own reads them, empties the file, sets the layout, switches every
 * handle to it and writes them back.  ip->lock held.
 */
static int relayout(struct clfs_inode *ip, uint64_t ino, int64_t size,
		    const struct clf_layout_desc *desc)
{
	struct clf_proto_attr a;
	char *buf;
	int fd, err = 0;

	if (size > CLFS_RELAYOUT_MAX)
		return -EBUSY;
	for (struct clfs_handle *h = ip->handles; h && !err; h = h->next)
		if ((h->flags & O_ACCMODE) != O_RDONLY)
			err = CLF_sync(h->fd);
	if (err)
		return err;
	buf = malloc((size_t)size);
	if (!buf)
		return -ENOMEM;
	fd = clf_ll_open(ino, O_RDWR, &a);
	if (fd < 0) {
		free(buf);
		return fd;
	}
	err = move_all(fd, buf, size, false);
	if (!err)
		err = CLF_ftruncate(fd, 0);
	if (!err)
		err = clf_ll_set_layout(ino, desc);
	if (!err)
		err = clf_ll_reload_layout(fd);
	for (struct clfs_handle *h = ip->handles; h && !err; h = h->next)
		err = clf_ll_reload_layout(h->fd);
	if (!err)
		err = move_all(fd, buf, size, true);
	if (!err)
		err = CLF_close(fd);
	else
		CLF_close(fd);
	free(buf);
	return err;
}

/* Set the layout of file ino and switch its open handles. */
static int set_file_layout(struct clfs *fs, uint64_t ino,
			   const struct clf_layout_desc *desc)
{
	struct clfs_inode *ip = clfs_iget(&fs->itab, ino);
	struct clf_proto_attr a;
	int64_t size;
	int err;

	if (!ip)
		return -ENOMEM;
	pthread_mutex_lock(&ip->lock);
	err = clf_ll_getattr(ino, &a);
	size = a.size;
	if (ip->size_dirty && ip->size > size)
		size = ip->size;
	if (!err && size > 0) {
		err = relayout(ip, ino, size, desc);
		goto unlock;
	}
	if (!err)
		err = clf_ll_set_layout(ino, desc);
	for (struct clfs_handle *h = ip->handles; h && !err; h = h->next)
		err = clf_ll_reload_layout(h->fd);
unlock:
	pthread_mutex_unlock(&ip->lock);
	clfs_iput(&fs->itab, ip);
	return err;
}

int clfs_setxattr(struct clfs *fs, const struct clfs_caller *who,
		  uint64_t ino, const char *name, const void *value,
		  size_t size, int flags)
{
	struct clf_layout_desc desc;
	char *text, *dflt = NULL;
	int err, dir;

	if (strcmp(name, CLFS_LAYOUT_XATTR))
		return -EOPNOTSUPP;
	if (fs->read_only)
		return -EROFS;
	if (size > CLF_LAYOUT_TEXT_MAX)
		return -E2BIG;
	dir = is_dir(fs, ino);
	if (dir < 0)
		return dir;
	text = strndup(value, size);
	if (!text)
		return -ENOMEM;
	err = clf_layout_text_parse(text, &desc);
	if (!err) {
		err = clf_ll_check_layout(&desc);
		if (err)
			clf_layout_desc_release(&desc);
	}
	if (err) {
		clfs_log(CLFS_LOG_WARNING, "inode %llu: refusing %s '%s': %s",
			 (unsigned long long)ino, name, text, CLF_Last_error());
		goto free_text;
	}
	if (!dir) {
		if (flags & XATTR_CREATE)
			err = -EEXIST;
		else if (!same_layout(ino, &desc))
			err = set_file_layout(fs, ino, &desc);
	} else {
		err = clfs_dir_default(fs, ino, &dflt);
		if (!err && (flags & XATTR_CREATE) && dflt)
			err = -EEXIST;
		else if (!err && (flags & XATTR_REPLACE) && !dflt)
			err = -ENODATA;
		if (!err)
			err = clfs_dir_set_default(fs, who, ino, text);
		free(dflt);
	}
	if (err && err != -EEXIST && err != -ENODATA)
		clfs_log(CLFS_LOG_WARNING, "inode %llu: cannot set %s '%s': %s",
			 (unsigned long long)ino, name, text,
			 err == -EBUSY ? "the file has more than 64 MiB: its layout is set before the first byte (setfattr on the empty file, clf setlayout, or clf cp -p, which creates the copy with it)"
				       : CLF_Last_error());
	clf_layout_desc_release(&desc);
free_text:
	free(text);
	return err;
}

ssize_t clfs_listxattr(struct clfs *fs, uint64_t ino, void *buf, size_t size)
{
	static const char names[] = CLFS_LAYOUT_XATTR;
	char *dflt = NULL;
	int err, dir = is_dir(fs, ino);

	if (dir < 0)
		return dir;
	if (dir) {
		bool has;

		err = clfs_dir_default(fs, ino, &dflt);
		if (err)
			return err;
		has = dflt != NULL;
		free(dflt);
		if (!has)
			return 0;
	}
	return give(names, sizeof(names), buf, size);
}

int clfs_removexattr(struct clfs *fs, uint64_t ino, const char *name)
{
	int dir;

	if (strcmp(name, CLFS_LAYOUT_XATTR))
		return -ENODATA;
	if (fs->read_only)
		return -EROFS;
	dir = is_dir(fs, ino);
	if (dir <= 0)
		return dir < 0 ? dir : -EPERM;	/* a file always has one */
	return clfs_dir_set_default(fs, NULL, ino, NULL);
}
