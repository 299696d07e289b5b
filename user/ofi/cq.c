// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Completion queues.  Reading polls the xroce CQ (which also runs a
 * progress round) into a small backlog and converts entries in order; an
 * error stops the read there (-FI_EAVAIL) until fi_cq_readerr takes it.
 * FI_WAIT_FD: an eventfd written by the xroce CQ's notification, armed by
 * fi_trywait; fi_cq_sread waits on it the same way.  The device's progress
 * thread delivers completions while nobody reads, so the descriptor
 * becomes readable without calls.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>

#include "ofi.h"

#include <rdma/fi_tagged.h>

/* Called by libxroce with its device lock held: only the eventfd. */
static void notify(struct xroce_cq *xcq, void *arg)
{
	struct xrf_cq *cq = arg;
	uint64_t one = 1;

	if (write(cq->efd, &one, sizeof(one)) < 0)
		FI_DBG(&xrf_prov, FI_LOG_CQ, "eventfd write: %s\n", strerror(errno));
}

/* Read what the xroce CQ has into the ring (which grows: its entries are
 * bounded by the operations the application posted); entries due to the
 * application left in the ring. */
static size_t pull(struct xrf_cq *cq)
{
	struct xroce_wc wc[XRF_CQ_BATCH];
	int k, i;

	do {
		k = xroce_poll_cq(cq->xcq, XRF_CQ_BATCH, wc);
		for (i = 0; i < k; i++) {
			if (xrf_cqe_silent(cq, &wc[i]))
				continue;
			if (cq->tail - cq->head == cq->cap) {
				size_t n = cq->cap ? 2 * cq->cap : XRF_CQ_BATCH, j;
				struct xroce_wc *r = malloc(n * sizeof(*r));

				if (!r) /* keep it in the xroce CQ's order: stop */
					return cq->tail - cq->head;
				for (j = 0; j < cq->tail - cq->head; j++)
					r[j] = cq->ring[(cq->head + j) % (cq->cap ? cq->cap : 1)];
				free(cq->ring);
				cq->ring = r;
				cq->tail -= cq->head;
				cq->head = 0;
				cq->cap = n;
			}
			cq->ring[cq->tail++ % cq->cap] = wc[i];
		}
	} while (k == XRF_CQ_BATCH);
	return cq->tail - cq->head;
}

/* Entries waiting in the ring, pulling from xroce when it is empty. */
static size_t refill(struct xrf_cq *cq)
{
	return cq->tail != cq->head ? cq->tail - cq->head : pull(cq);
}

void xrf_cq_sweep(struct xrf_cq *cq)
{
	pthread_mutex_lock(&cq->lock);
	pull(cq);
	pthread_mutex_unlock(&cq->lock);
}

static ssize_t cq_readfrom(struct fid_cq *cq_fid, void *buf, size_t count,
			   fi_addr_t *src_addr)
{
	struct xrf_cq *cq = (struct xrf_cq *)cq_fid;
	size_t n = 0;

	if (!buf && count)
		return -FI_EINVAL;
	pthread_mutex_lock(&cq->lock);
	while (n < count && !cq->err_ready && refill(cq)) {
		int rc = xrf_cqe_convert(cq, &cq->ring[cq->head++ % cq->cap],
					 (uint8_t *)buf + n * cq->entry_size);

		if (rc == 1) {
			if (src_addr)
				src_addr[n] = FI_ADDR_NOTAVAIL;
			n++;
		} else if (rc == -FI_EAVAIL) {
			cq->err_ready = true;
		}
	}
	pthread_mutex_unlock(&cq->lock);
	if (n)
		return (ssize_t)n;
	return cq->err_ready ? -FI_EAVAIL : -FI_EAGAIN;
}

static ssize_t cq_read(struct fid_cq *cq_fid, void *buf, size_t count)
{
	return cq_readfrom(cq_fid, buf, count, NULL);
}

static ssize_t cq_readerr(struct fid_cq *cq_fid, struct fi_cq_err_entry *buf,
			  uint64_t flags)
{
	struct xrf_cq *cq = (struct xrf_cq *)cq_fid;
	void *user_data;
	size_t user_size;

	if (!buf || flags)
		return -FI_EINVAL;
	pthread_mutex_lock(&cq->lock);
	if (!cq->err_ready) {
		pthread_mutex_unlock(&cq->lock);
		return -FI_EAGAIN;
	}
	user_data = buf->err_data;
	user_size = buf->err_data_size;
	*buf = cq->err;
	/* No provider error data: a caller's buffer stays its own. */
	buf->err_data = user_size ? user_data : NULL;
	buf->err_data_size = 0;
	cq->err_ready = false;
	pthread_mutex_unlock(&cq->lock);
	return 1;
}

int xrf_cq_trywait(struct xrf_cq *cq)
{
	uint64_t v;
	int rc;

	if (cq->efd < 0)
		return -FI_EINVAL;
	if (read(cq->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return -errno;
	rc = xroce_req_notify_cq(cq->xcq, 0);
	if (rc)
		return rc;
	/* Armed first, then looked: a completion between the two still
	 * writes the eventfd. */
	pthread_mutex_lock(&cq->lock);
	rc = cq->err_ready || refill(cq) ? -FI_EAGAIN : 0;
	pthread_mutex_unlock(&cq->lock);
	return rc;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static ssize_t cq_sreadfrom(struct fid_cq *cq_fid, void *buf, size_t count,
			    fi_addr_t *src_addr, const void *cond, int timeout)
{
	struct xrf_cq *cq = (struct xrf_cq *)cq_fid;
	uint64_t end = timeout < 0 ? UINT64_MAX : now_ms() + (uint64_t)timeout;

	if (cq->efd < 0)
		return -FI_ENOSYS; /* FI_WAIT_NONE */
	for (;;) {
		ssize_t rc = cq_readfrom(cq_fid, buf, count, src_addr);
		struct pollfd p = { .fd = cq->efd, .events = POLLIN };
		uint64_t now;

		if (rc != -FI_EAGAIN)
			return rc;
		if (cq->signaled) {
			cq->signaled = 0;
			return -FI_EAGAIN;
		}
		now = now_ms();
		if (now >= end)
			return -FI_EAGAIN;
		if (xrf_cq_trywait(cq))
			continue;
		/* Without a progress thread nothing fills the CQ meanwhile:
		 * come back soon to run a round. */
		poll(&p, 1, !xrf_params.progress_thread ? 1 :
			 end - now > 1000 ? 1000 : (int)(end - now));
	}
}

static ssize_t cq_sread(struct fid_cq *cq_fid, void *buf, size_t count,
			const void *cond, int timeout)
{
	return cq_sreadfrom(cq_fid, buf, count, NULL, cond, timeout);
}

static int cq_signal(struct fid_cq *cq_fid)
{
	struct xrf_cq *cq = (struct xrf_cq *)cq_fid;
	uint64_t one = 1;

	cq->signaled = 1;
	if (cq->efd >= 0 && write(cq->efd, &one, sizeof(one)) < 0)
		return -errno;
	return 0;
}

static const char *cq_strerror(struct fid_cq *cq, int prov_errno,
			       const void *err_data, char *buf, size_t len)
{
	const char *s = xrf_wc_strerror(prov_errno);

	if (buf && len) {
		strncpy(buf, s, len - 1);
		buf[len - 1] = 0;
		return buf;
	}
	return s;
}

static int cq_control(struct fid *fid, int command, void *arg)
{
	struct xrf_cq *cq = (struct xrf_cq *)fid;

	if (command != FI_GETWAIT)
		return -FI_ENOSYS;
	if (cq->efd < 0)
		return -FI_ENODATA;
	if (!arg)
		return -FI_EINVAL;
	*(int *)arg = cq->efd;
	return 0;
}

/* Completions nobody will read: their operations go back to the pool. */
static void drain(struct xrf_cq *cq)
{
	char scratch[sizeof(struct fi_cq_tagged_entry)];

	cq->err_ready = false;
	while (refill(cq)) {
		xrf_cqe_convert(cq, &cq->ring[cq->head++ % cq->cap], scratch);
		cq->err_ready = false;
	}
	free(cq->ring);
	cq->ring = NULL;
	cq->head = cq->tail = cq->cap = 0;
}

static int cq_close(struct fid *fid)
{
	struct xrf_cq *cq = (struct xrf_cq *)fid;
	int rc;

	pthread_mutex_lock(&cq->lock);
	if (cq->refs) {
		pthread_mutex_unlock(&cq->lock);
		return -FI_EBUSY;
	}
	drain(cq);
	pthread_mutex_unlock(&cq->lock);
	rc = xroce_destroy_cq(cq->xcq);
	if (rc)
		return rc;
	if (cq->efd >= 0)
		close(cq->efd);
	pthread_mutex_lock(&cq->dom->lock);
	cq->dom->refs--;
	pthread_mutex_unlock(&cq->dom->lock);
	pthread_mutex_destroy(&cq->lock);
	free(cq);
	return 0;
}

static struct fi_ops cq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = cq_close,
	.bind = xrf_no_bind,
	.control = cq_control,
	.ops_open = xrf_no_ops_open,
	.tostr = xrf_no_tostr,
	.ops_set = xrf_no_ops_set,
};

static struct fi_ops_cq cq_ops = {
	.size = sizeof(struct fi_ops_cq),
	.read = cq_read,
	.readfrom = cq_readfrom,
	.readerr = cq_readerr,
	.sread = cq_sread,
	.sreadfrom = cq_sreadfrom,
	.signal = cq_signal,
	.strerror = cq_strerror,
};

static int check_attr(const struct fi_cq_attr *attr, size_t *entry_size)
{
	switch (attr->format) {
	case FI_CQ_FORMAT_UNSPEC:
	case FI_CQ_FORMAT_CONTEXT:
		*entry_size = sizeof(struct fi_cq_entry);
		break;
	case FI_CQ_FORMAT_MSG:
		*entry_size = sizeof(struct fi_cq_msg_entry);
		break;
	case FI_CQ_FORMAT_DATA:
		*entry_size = sizeof(struct fi_cq_data_entry);
		break;
	case FI_CQ_FORMAT_TAGGED:
		*entry_size = sizeof(struct fi_cq_tagged_entry);
		break;
	default:
		return -FI_ENOSYS;
	}
	if (attr->wait_obj != FI_WAIT_NONE && attr->wait_obj != FI_WAIT_UNSPEC &&
	    attr->wait_obj != FI_WAIT_FD)
		return -FI_ENOSYS;
	if (attr->flags & ~(uint64_t)FI_AFFINITY)
		return -FI_EBADFLAGS;
	if (attr->wait_cond != FI_CQ_COND_NONE && attr->wait_cond != FI_CQ_COND_THRESHOLD)
		return -FI_ENOSYS;
	if (attr->size > (1u << 22))
		return -FI_EINVAL;
	return 0;
}

static int cq_setup(struct xrf_cq *cq, const struct fi_cq_attr *attr)
{
	int rc;

	cq->efd = -1;
	cq->wait_obj = attr->wait_obj;
	if (attr->wait_obj != FI_WAIT_NONE) {
		cq->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (cq->efd < 0)
			return -FI_ENOMEM;
	}
	rc = xroce_create_cq(cq->dom->xd->dev, attr->size ? (int)attr->size : 4096,
			     &cq->xcq);
	if (!rc && cq->efd >= 0)
		rc = xroce_cq_set_notify(cq->xcq, notify, cq);
	if (!rc && pthread_mutex_init(&cq->lock, NULL))
		rc = -FI_ENOMEM;
	if (rc) {
		if (cq->xcq)
			xroce_destroy_cq(cq->xcq);
		if (cq->efd >= 0)
			close(cq->efd);
	}
	return rc;
}

int xrf_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr,
		struct fid_cq **out, void *context)
{
	struct xrf_domain *dom = (struct xrf_domain *)domain;
	struct xrf_cq *cq;
	size_t esz;
	int rc;

	if (!domain || !attr || !out)
		return -FI_EINVAL;
	rc = check_attr(attr, &esz);
	if (rc)
		return rc;
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return -FI_ENOMEM;
	cq->dom = dom;
	cq->entry_size = esz;
	cq->format = attr->format ? attr->format : FI_CQ_FORMAT_CONTEXT;
	rc = cq_setup(cq, attr);
	if (rc) {
		free(cq);
		return rc;
	}
	cq->cq_fid.fid.fclass = FI_CLASS_CQ;
	cq->cq_fid.fid.context = context;
	cq->cq_fid.fid.ops = &cq_fi_ops;
	cq->cq_fid.ops = &cq_ops;
	pthread_mutex_lock(&dom->lock);
	dom->refs++;
	pthread_mutex_unlock(&dom->lock);
	*out = &cq->cq_fid;
	return 0;
}
