// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Event queues: connection events (FI_CONNREQ, FI_CONNECTED, FI_SHUTDOWN),
 * connection errors (FI_ECONNREFUSED with the peer's reject data, ...)
 * and the application's own (fi_eq_write).  The CM progress (cm.c) queues
 * events; reading first runs it, so an application that only reads makes
 * progress without the CM thread.  FI_WAIT_FD: an eventfd written for
 * every event queued, drained by fi_trywait.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>

#include "ofi.h"

struct xrf_eq_entry {
	struct xrf_eq_entry *next;
	uint32_t event;
	bool err;
	fid_t fid;
	struct fi_info *info;         /* FI_CONNREQ: the application's once read */
	struct fi_eq_err_entry errent;
	uint8_t err_data[XROCE_PRIVATE_DATA_MAX];
	size_t len;                   /* bytes of the entry below */
	uint8_t bytes[];
};

static void push(struct xrf_eq *eq, struct xrf_eq_entry *e)
{
	uint64_t one = 1;

	pthread_mutex_lock(&eq->lock);
	if (eq->tail)
		eq->tail->next = e;
	else
		eq->head = e;
	eq->tail = e;
	pthread_mutex_unlock(&eq->lock);
	if (eq->efd >= 0 && write(eq->efd, &one, sizeof(one)) < 0)
		FI_DBG(&xrf_prov, FI_LOG_EQ, "eventfd write: %s\n", strerror(errno));
}

int xrf_eq_push_cm(struct xrf_eq *eq, uint32_t event, fid_t fid,
		   struct fi_info *info, const void *data, size_t len)
{
	struct xrf_eq_entry *e = calloc(1, sizeof(*e) + sizeof(struct fi_eq_cm_entry) + len);
	struct fi_eq_cm_entry *cm;

	if (!e)
		return -FI_ENOMEM;
	e->event = event;
	e->fid = fid;
	e->info = info;
	e->len = sizeof(*cm) + len;
	cm = (struct fi_eq_cm_entry *)e->bytes;
	cm->fid = fid;
	cm->info = info;
	if (len)
		memcpy(cm->data, data, len);
	push(eq, e);
	return 0;
}

int xrf_eq_push_err(struct xrf_eq *eq, fid_t fid, int err, int prov_errno,
		    const void *data, size_t len)
{
	struct xrf_eq_entry *e = calloc(1, sizeof(*e));

	if (!e)
		return -FI_ENOMEM;
	if (len > sizeof(e->err_data))
		len = sizeof(e->err_data);
	e->err = true;
	e->fid = fid;
	e->errent.fid = fid;
	e->errent.context = fid ? fid->context : NULL;
	e->errent.err = err;
	e->errent.prov_errno = prov_errno;
	e->errent.err_data_size = len;
	if (len)
		memcpy(e->err_data, data, len);
	push(eq, e);
	return 0;
}

void xrf_eq_forget(struct xrf_eq *eq, fid_t fid)
{
	struct xrf_eq_entry **pp, *e;

	pthread_mutex_lock(&eq->lock);
	eq->tail = NULL;
	for (pp = &eq->head; *pp;) {
		e = *pp;
		if (e->fid == fid) {
			*pp = e->next;
			fi_freeinfo(e->info);
			free(e);
			continue;
		}
		eq->tail = e;
		pp = &e->next;
	}
	pthread_mutex_unlock(&eq->lock);
}

/* Take the head entry (not FI_PEEK) */
static void pop(struct xrf_eq *eq)
{
	struct xrf_eq_entry *e = eq->head;

	eq->head = e->next;
	if (!eq->head)
		eq->tail = NULL;
	free(e);
}

static ssize_t eq_read_locked(struct xrf_eq *eq, uint32_t *event, void *buf,
			      size_t len, uint64_t flags)
{
	struct xrf_eq_entry *e = eq->head;

	if (!e)
		return -FI_EAGAIN;
	if (e->err)
		return -FI_EAVAIL;
	if (len < e->len)
		return -FI_ETOOSMALL;
	if (event)
		*event = e->event;
	if (e->len)
		memcpy(buf, e->bytes, e->len);
	len = e->len;
	if (!(flags & FI_PEEK))
		pop(eq); /* the fi_info now belongs to the application */
	return (ssize_t)len;
}

static ssize_t eq_read(struct fid_eq *eq_fid, uint32_t *event, void *buf,
		       size_t len, uint64_t flags)
{
	struct xrf_eq *eq = (struct xrf_eq *)eq_fid;
	ssize_t rc;

	if ((!buf && len) || (flags & ~(uint64_t)FI_PEEK))
		return -FI_EINVAL;
	xrf_cm_progress();
	pthread_mutex_lock(&eq->lock);
	rc = eq_read_locked(eq, event, buf, len, flags);
	pthread_mutex_unlock(&eq->lock);
	return rc;
}

static ssize_t eq_readerr(struct fid_eq *eq_fid, struct fi_eq_err_entry *buf,
			  uint64_t flags)
{
	struct xrf_eq *eq = (struct xrf_eq *)eq_fid;
	struct xrf_eq_entry *e;
	void *user_data;
	size_t user_size;

	if (!buf || (flags & ~(uint64_t)FI_PEEK))
		return -FI_EINVAL;
	pthread_mutex_lock(&eq->lock);
	e = eq->head;
	if (!e || !e->err) {
		pthread_mutex_unlock(&eq->lock);
		return -FI_EAGAIN;
	}
	/* API 1.5 on: a caller-provided err_data buffer is filled; without
	 * one, err_data points at the EQ's until the next readerr. */
	user_data = buf->err_data;
	user_size = buf->err_data_size;
	*buf = e->errent;
	if (user_data && user_size) {
		buf->err_data = user_data;
		buf->err_data_size = user_size < e->errent.err_data_size ?
				     user_size : e->errent.err_data_size;
		memcpy(user_data, e->err_data, buf->err_data_size);
	} else {
		memcpy(eq->err_data, e->err_data, e->errent.err_data_size);
		buf->err_data = e->errent.err_data_size ? eq->err_data : NULL;
	}
	if (!(flags & FI_PEEK))
		pop(eq);
	pthread_mutex_unlock(&eq->lock);
	return sizeof(*buf);
}

static ssize_t eq_write(struct fid_eq *eq_fid, uint32_t event, const void *buf,
			size_t len, uint64_t flags)
{
	struct xrf_eq *eq = (struct xrf_eq *)eq_fid;
	struct xrf_eq_entry *e;

	if ((!buf && len) || (flags & ~(uint64_t)FI_PEEK) || len > (1u << 20))
		return -FI_EINVAL;
	e = calloc(1, sizeof(*e) + len);
	if (!e)
		return -FI_ENOMEM;
	e->event = event;
	e->len = len;
	if (len)
		memcpy(e->bytes, buf, len);
	push(eq, e);
	return (ssize_t)len;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Connection progress needs polling (cm.c), so the wait is cut into short
 * steps; an event queued by the CM thread wakes it at once. */
static ssize_t eq_sread(struct fid_eq *eq_fid, uint32_t *event, void *buf,
			size_t len, int timeout, uint64_t flags)
{
	struct xrf_eq *eq = (struct xrf_eq *)eq_fid;
	uint64_t end = timeout < 0 ? UINT64_MAX : now_ms() + (uint64_t)timeout;

	if (eq->wait_obj == FI_WAIT_NONE)
		return -FI_ENOSYS;
	for (;;) {
		ssize_t rc = eq_read(eq_fid, event, buf, len, flags);
		uint64_t now = now_ms(), v;
		struct pollfd p = { .fd = eq->efd, .events = POLLIN };

		if (rc != -FI_EAGAIN || now >= end)
			return rc;
		poll(&p, 1, end - now < 2 ? (int)(end - now) : 2);
		if ((p.revents & POLLIN) && read(eq->efd, &v, sizeof(v)) < 0)
			FI_DBG(&xrf_prov, FI_LOG_EQ, "eventfd read failed\n");
	}
}

static const char *eq_strerror(struct fid_eq *eq, int prov_errno,
			       const void *err_data, char *buf, size_t len)
{
	const char *s = fi_strerror(prov_errno < 0 ? -prov_errno : prov_errno);

	if (buf && len) {
		strncpy(buf, s, len - 1);
		buf[len - 1] = 0;
		return buf;
	}
	return s;
}

int xrf_eq_trywait(struct xrf_eq *eq)
{
	uint64_t v;
	int rc;

	if (eq->efd < 0)
		return -FI_EINVAL;
	if (read(eq->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return -errno;
	xrf_cm_progress();
	pthread_mutex_lock(&eq->lock);
	rc = eq->head ? -FI_EAGAIN : 0;
	pthread_mutex_unlock(&eq->lock);
	return rc;
}

static int eq_control(struct fid *fid, int command, void *arg)
{
	struct xrf_eq *eq = (struct xrf_eq *)fid;

	if (command != FI_GETWAIT)
		return -FI_ENOSYS;
	if (eq->efd < 0)
		return -FI_ENODATA;
	if (!arg)
		return -FI_EINVAL;
	*(int *)arg = eq->efd;
	return 0;
}

static int eq_close(struct fid *fid)
{
	struct xrf_eq *eq = (struct xrf_eq *)fid;

	pthread_mutex_lock(&eq->lock);
	if (eq->refs) {
		pthread_mutex_unlock(&eq->lock);
		return -FI_EBUSY;
	}
	while (eq->head) {
		fi_freeinfo(eq->head->info);
		pop(eq);
	}
	pthread_mutex_unlock(&eq->lock);
	xrf_cm_thread_put();
	if (eq->efd >= 0)
		close(eq->efd);
	pthread_mutex_lock(&eq->fab->lock);
	eq->fab->refs--;
	pthread_mutex_unlock(&eq->fab->lock);
	pthread_mutex_destroy(&eq->lock);
	free(eq);
	return 0;
}

static struct fi_ops eq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = eq_close,
	.bind = xrf_no_bind,
	.control = eq_control,
	.ops_open = xrf_no_ops_open,
	.tostr = xrf_no_tostr,
	.ops_set = xrf_no_ops_set,
};

static struct fi_ops_eq eq_ops = {
	.size = sizeof(struct fi_ops_eq),
	.read = eq_read,
	.readerr = eq_readerr,
	.write = eq_write,
	.sread = eq_sread,
	.strerror = eq_strerror,
};

int xrf_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr,
		struct fid_eq **out, void *context)
{
	struct xrf_fabric *fab = (struct xrf_fabric *)fabric;
	struct xrf_eq *eq;
	int rc;

	if (!fabric || !attr || !out)
		return -FI_EINVAL;
	if (attr->wait_obj != FI_WAIT_NONE && attr->wait_obj != FI_WAIT_UNSPEC &&
	    attr->wait_obj != FI_WAIT_FD)
		return -FI_ENOSYS;
	if (attr->flags & ~(uint64_t)(FI_WRITE | FI_AFFINITY))
		return -FI_EBADFLAGS;
	eq = calloc(1, sizeof(*eq));
	if (!eq)
		return -FI_ENOMEM;
	eq->efd = -1;
	eq->wait_obj = attr->wait_obj == FI_WAIT_UNSPEC ? FI_WAIT_FD : attr->wait_obj;
	if (eq->wait_obj == FI_WAIT_FD) {
		eq->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (eq->efd < 0) {
			free(eq);
			return -FI_ENOMEM;
		}
	}
	rc = xrf_cm_thread_get();
	if (rc || pthread_mutex_init(&eq->lock, NULL)) {
		if (!rc)
			xrf_cm_thread_put();
		if (eq->efd >= 0)
			close(eq->efd);
		free(eq);
		return rc ? rc : -FI_ENOMEM;
	}
	eq->fab = fab;
	eq->flags = attr->flags;
	eq->eq_fid.fid.fclass = FI_CLASS_EQ;
	eq->eq_fid.fid.context = context;
	eq->eq_fid.fid.ops = &eq_fi_ops;
	eq->eq_fid.ops = &eq_ops;
	pthread_mutex_lock(&fab->lock);
	fab->refs++;
	pthread_mutex_unlock(&fab->lock);
	*out = &eq->eq_fid;
	return 0;
}
