// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * file_table.c -- the open files of this process: descriptors, the
 * references that keep a file alive while a call uses it, and each
 * file's layout with the view mapped onto it.  Below every file call
 * (open, close, I/O, locks, the calls by inode), which all look their
 * file up here.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "client_i.h"
#include "xcache.h"
#include "error.h"

static pthread_mutex_t files_lock = PTHREAD_MUTEX_INITIALIZER;
static struct clf_file **files;	/* by descriptor; guarded by files_lock */
static int nfiles;		/* slots in files */

/* Install layout (taken) and recompute the view against it. */
int clf_file_set_layout(struct clf_file *f, struct clf_layout *layout)
{
	struct clf_viewmap *view;
	uint32_t *handles;
	uint64_t *gen;
	int err;

	err = clf_viewmap_create(layout, f->view_disp, f->view_type, &view);
	if (err)
		goto free_layout;
	handles = calloc(layout->nsub, sizeof(*handles));
	gen = calloc(layout->nsub, sizeof(*gen));
	if (!handles || !gen) {
		free(handles);
		free(gen);
		clf_viewmap_free(view);
		err = clf_fail(ENOMEM, "clf: out of memory");
		goto free_layout;
	}
	/* Every view was mapped onto the old layout. */
	clf_file_release_views(f);
	clf_view_cache_clear(f);
	clf_viewmap_free(f->view);
	clf_layout_free(f->layout);
	free(f->handles);
	free(f->handle_gen);
	f->layout = layout;
	f->view = view;
	f->handles = handles;
	f->handle_gen = gen;
	return 0;
free_layout:
	clf_layout_free(layout);
	return err;
}

void clf_file_free(struct clf_file *f)
{
	if (!f)
		return;
	/* The mount's files (clf_ll.h) end here without CLF_close: what
	 * the cache kept of them goes out, their locks go back. */
	(void)clf_xcache_close_file(f);
	clf_viewmap_free(f->view);
	clf_layout_free(f->layout);
	CLF_Type_free(&f->view_type);
	if (f->has_lane && clf_client_instance)
		clf_client_give_lane(clf_client_instance, f->lane);
	free(f->handles);
	free(f->handle_gen);
	free(f->view_key);
	pthread_mutex_destroy(&f->lock);
	free(f);
}

int clf_file_install(struct clf_file *f)
{
	int fd;

	pthread_mutex_lock(&files_lock);
	for (fd = 0; fd < nfiles && files[fd]; fd++)
		;
	if (fd == nfiles) {
		int n = nfiles ? 2 * nfiles : 16;
		struct clf_file **nf = realloc(files, n * sizeof(*nf));

		if (!nf) {
			pthread_mutex_unlock(&files_lock);
			return clf_fail(ENOMEM, "clf: out of memory");
		}
		memset(nf + nfiles, 0, (n - nfiles) * sizeof(*nf));
		files = nf;
		nfiles = n;
	}
	f->refs = 1;		/* the table's */
	f->lane = clf_client_take_lane(clf_client_instance);
	f->has_lane = true;
	files[fd] = f;
	pthread_mutex_unlock(&files_lock);
	return fd;
}

/* Drop one reference; the last frees the file. */
static void file_unref(struct clf_file *f)
{
	int left;

	pthread_mutex_lock(&files_lock);
	left = --f->refs;
	pthread_mutex_unlock(&files_lock);
	if (!left)
		clf_file_free(f);
}

int clf_file_get(int fd, struct clf_file **out)
{
	struct clf_file *f = NULL;

	pthread_mutex_lock(&files_lock);
	if (fd >= 0 && fd < nfiles)
		f = files[fd];
	if (f)
		f->refs++;
	pthread_mutex_unlock(&files_lock);
	if (!f)
		return clf_fail(EBADF, "clf: %d is not an open clf file", fd);
	pthread_mutex_lock(&f->lock);
	if (f->closed) {
		/* Closed while we waited for it. */
		pthread_mutex_unlock(&f->lock);
		file_unref(f);
		return clf_fail(EBADF, "clf: %d is not an open clf file", fd);
	}
	/* This thread's calls on no file go on its file's lane: sizes asked
	 * for a file do not wait behind another file's long request. */
	clf_client_follow_lane(f->lane);
	*out = f;
	return 0;
}

void clf_file_put(struct clf_file *f)
{
	pthread_mutex_unlock(&f->lock);
	file_unref(f);
}

int clf_file_flush_size(struct clf_file *f)
{
	struct clf_proto_attr attr;
	int err;

	if (f->dirty_end <= f->size)
		return 0;
	err = clf_meta_update_size(f->ino, f->dirty_end, &attr);
	if (err)
		return err;
	f->size = attr.size;
	f->dirty_end = 0;
	return 0;
}

int clf_file_open_layout(uint64_t ino, int64_t size, int flags,
			 struct clf_layout *layout)
{
	struct clf_client *cl;
	struct clf_file *f;
	int err, fd;

	err = clf_client_get(&cl);
	if (err)
		goto free_layout;
	f = calloc(1, sizeof(*f));
	if (!f) {
		err = clf_fail(ENOMEM, "clf: out of memory");
		goto free_layout;
	}
	pthread_mutex_init(&f->lock, NULL);
	f->flags = flags & (O_ACCMODE | O_APPEND);
	f->view_type = CLF_BYTE;
	f->ino = ino;
	f->size = size;
	err = clf_file_set_layout(f, layout);
	if (err)
		goto free_file;
	fd = clf_file_install(f);
	if (fd >= 0)
		return fd;
	err = fd;
free_file:
	clf_file_free(f);
	return err;
free_layout:
	clf_layout_free(layout);
	return err;
}

int clf_file_replace_layout(struct clf_file *f, struct clf_layout *layout)
{
	return clf_file_set_layout(f, layout);
}

void CLF_Layout_release(struct clf_layout_info *info)
{
	if (!info)
		return;
	for (int j = 0; info->types && j < info->count; j++)
		CLF_Type_free(&info->types[j]);
	free(info->types);
	free(info->iods);
	info->types = NULL;
	info->iods = NULL;
	info->count = 0;
}

void clf_file_detach(int fd, struct clf_file *f)
{
	pthread_mutex_lock(&files_lock);
	files[fd] = NULL;
	f->refs--;		/* the table's; the caller's keeps f alive */
	pthread_mutex_unlock(&files_lock);
}

void clf_files_close_all(int (*close_fd)(int fd))
{
	for (int fd = 0; fd < nfiles; fd++)
		if (files[fd])
			close_fd(fd);
	free(files);
	files = NULL;
	nfiles = 0;
}
