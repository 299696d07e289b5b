/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Helpers of the libfabric tests (tests/ofi/): plain libfabric calls, as
 * any application would make them, with the provider picked by
 * FI_PROVIDER_PATH.  Every helper returns 0 or prints why and returns 1.
 */
#ifndef XR_TESTS_OFI_COMMON_H
#define XR_TESTS_OFI_COMMON_H

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#define WAIT_MS 20000

static const char *prog = "ofi";

#define CHECK(cond, ...) do {                                             \
	if (!(cond)) {                                                    \
		fprintf(stderr, "%s:%d: ", prog, __LINE__);               \
		fprintf(stderr, __VA_ARGS__);                             \
		fprintf(stderr, "\n");                                    \
		return 1;                                                 \
	}                                                                 \
} while (0)

/* rc (a libfabric call's result) is want. */
#define EXPECT(rc, want, what) do {                                       \
	long _rc = (long)(rc);                                            \
	if (_rc != (long)(want)) {                                        \
		fprintf(stderr, "%s:%d: %s returned %ld (%s), expected %ld\n", \
			prog, __LINE__, what, _rc, fi_strerror((int)-_rc),  \
			(long)(want));                                    \
		return 1;                                                 \
	}                                                                 \
} while (0)

static inline uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Hints for the xroce provider's FI_EP_MSG endpoints, with RMA. */
static inline struct fi_info *xr_hints(void)
{
	struct fi_info *h = fi_allocinfo();

	if (!h)
		return NULL;
	h->caps = FI_MSG | FI_RMA;
	h->mode = FI_CONTEXT | FI_RX_CQ_DATA;
	h->ep_attr->type = FI_EP_MSG;
	h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
				  FI_MR_PROV_KEY;
	h->addr_format = FI_SOCKADDR_IN;
	h->fabric_attr->prov_name = strdup("xroce");
	return h;
}

/* One completion (or an error entry, then *err is filled and 1 returned
 * through *is_err) within WAIT_MS. */
static inline int cq_one(struct fid_cq *cq, struct fi_cq_data_entry *e,
			 struct fi_cq_err_entry *err, int *is_err)
{
	uint64_t end = now_ms() + WAIT_MS;
	ssize_t n;

	*is_err = 0;
	do {
		n = fi_cq_read(cq, e, 1);
		if (n == 1)
			return 0;
		if (n == -FI_EAVAIL) {
			memset(err, 0, sizeof(*err));
			n = fi_cq_readerr(cq, err, 0);
			CHECK(n == 1, "fi_cq_readerr: %zd", n);
			*is_err = 1;
			return 0;
		}
		CHECK(n == -FI_EAGAIN, "fi_cq_read: %s", fi_strerror((int)-n));
	} while (now_ms() < end);
	CHECK(0, "no completion in %d ms", WAIT_MS);
}

/* A successful completion whose context is ctx. */
static inline int cq_ok(struct fid_cq *cq, void *ctx, struct fi_cq_data_entry *e)
{
	struct fi_cq_err_entry err;
	int is_err;

	if (cq_one(cq, e, &err, &is_err))
		return 1;
	CHECK(!is_err, "completion error %s (%s)", fi_strerror(err.err),
	      fi_cq_strerror(cq, err.prov_errno, err.err_data, NULL, 0));
	CHECK(e->op_context == ctx, "completion for %p, expected %p", e->op_context, ctx);
	return 0;
}

/* The next EQ event: its type in *event, the entry in buf. */
static inline int eq_next(struct fid_eq *eq, uint32_t *event, void *buf, size_t len,
			  struct fi_eq_err_entry *err)
{
	ssize_t n = fi_eq_sread(eq, event, buf, len, WAIT_MS, 0);

	if (n == -FI_EAVAIL) {
		memset(err, 0, sizeof(*err));
		CHECK(fi_eq_readerr(eq, err, 0) == sizeof(*err), "fi_eq_readerr");
		*event = 0;
		return 0;
	}
	CHECK(n > 0, "fi_eq_sread: %s", fi_strerror((int)-n));
	return 0;
}

#endif /* XR_TESTS_OFI_COMMON_H */
