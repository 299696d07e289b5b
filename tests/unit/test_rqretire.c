// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Tests of user/engine/rqretire.c: completed receives leave xr_rq behind
 * the connection's xr_evb guard, in batches.  The xr_rq here is a real BPF
 * hash map of the ABI's key and value (root only: skipped otherwise); the
 * device's mapped xr_evb is plain memory, which is all the library sees of
 * it.  What is checked:
 *   - the guard: rq_done one past each completed receive, rq_stream, rq_on;
 *   - a batch: entries stay until the XR_RQ_RETIRE-th retirement, then all
 *     go in one deletion;
 *   - a receive published in the slot of one waiting for its batch is not
 *     deleted with the batch (the same key);
 *   - another stream, and a device without a mapped xr_evb: at once;
 *   - reset: the batch deleted, the next completion guards afresh;
 *   - a batch whose entries are gone already (deleted one by one then).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "device.h"
#include "qp.h"
#include "rqretire.h"

#define CONN 7
#define NCONNS 16

struct fix {
	struct xroce_device dev;
	struct xroce_qp qp;
	struct xr_evb evb[NCONNS];
};

static int setup(void **state)
{
	struct fix *f;
	int fd;

	if (geteuid() != 0)
		return 0;
	fd = bpf_map_create(BPF_MAP_TYPE_HASH, "xrt_rq", sizeof(struct xr_rq_key),
			    sizeof(struct xr_rq_ent), 1024, NULL);
	if (fd < 0)
		return -1;
	f = calloc(1, sizeof(*f));
	if (!f) {
		close(fd);
		return -1;
	}
	f->dev.maps.rq = fd;
	f->dev.evb = f->evb;
	f->dev.evb_n = NCONNS;
	f->dev.qps = &f->qp;
	f->qp.dev = &f->dev;
	f->qp.conn_id = CONN;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fix *f = *state;

	if (f) {
		close(f->dev.maps.rq);
		free(f);
	}
	return 0;
}

#define NEED_ROOT(f)                                                   \
	do {                                                           \
		if (!(f)) {                                            \
			print_message("  (not root: skipped)\n");      \
			skip();                                        \
		}                                                      \
	} while (0)

/* Receive msn of stream published as the library does. */
static void publish(struct fix *f, uint16_t stream, uint32_t msn)
{
	struct xr_rq_key k = { .conn = CONN, .stream = stream,
			       .slot = (uint16_t)(msn % XR_RQ_SLOTS) };
	struct xr_rq_ent v = { .msn = msn, .len = 64, .conn = CONN,
			       .stream = stream, .state = XR_RQ_OPEN };

	assert_int_equal(bpf_map_update_elem(f->dev.maps.rq, &k, &v, BPF_ANY), 0);
	xr_rq_retire_posting(&f->qp, stream, msn);
}

/* The msn xr_rq holds under receive msn's key, or -1: no entry. */
static int64_t entry(struct fix *f, uint16_t stream, uint32_t msn)
{
	struct xr_rq_key k = { .conn = CONN, .stream = stream,
			       .slot = (uint16_t)(msn % XR_RQ_SLOTS) };
	struct xr_rq_ent v;

	if (bpf_map_lookup_elem(f->dev.maps.rq, &k, &v))
		return -1;
	return v.msn;
}

static void test_guard_and_batch(void **state)
{
	struct fix *f = *state;
	uint32_t i;

	NEED_ROOT(f);
	for (i = 0; i < XR_RQ_RETIRE + 2; i++)
		publish(f, 0, i);
	xr_rq_retire(&f->qp, 0, 0);
	assert_int_equal(f->evb[CONN].rq_on, 1);
	assert_int_equal(f->evb[CONN].rq_stream, 0);
	assert_int_equal(f->evb[CONN].rq_done, 1);
	assert_int_equal(entry(f, 0, 0), 0); /* waits for its batch */
	for (i = 1; i < XR_RQ_RETIRE - 1; i++)
		xr_rq_retire(&f->qp, 0, i);
	assert_int_equal(f->evb[CONN].rq_done, XR_RQ_RETIRE - 1);
	for (i = 0; i < XR_RQ_RETIRE - 1; i++)
		assert_int_equal(entry(f, 0, i), i);
	xr_rq_retire(&f->qp, 0, XR_RQ_RETIRE - 1); /* the batch is full */
	assert_int_equal(f->qp.rq_nretire, 0);
	for (i = 0; i < XR_RQ_RETIRE; i++)
		assert_int_equal(entry(f, 0, i), -1);
	/* the receives still posted are untouched */
	assert_int_equal(entry(f, 0, XR_RQ_RETIRE), XR_RQ_RETIRE);
	assert_int_equal(entry(f, 0, XR_RQ_RETIRE + 1), XR_RQ_RETIRE + 1);
}

static void test_same_slot_not_deleted(void **state)
{
	struct fix *f = *state;

	NEED_ROOT(f);
	publish(f, 0, 3);
	publish(f, 0, 4);
	xr_rq_retire(&f->qp, 0, 3);
	xr_rq_retire(&f->qp, 0, 4);
	/* receive 3 + 256 takes the key receive 3 waits under */
	publish(f, 0, 3 + XR_RQ_SLOTS);
	assert_int_equal(f->qp.rq_nretire, 1);
	xr_rq_retire_flush(&f->qp);
	assert_int_equal(entry(f, 0, 3 + XR_RQ_SLOTS), 3 + XR_RQ_SLOTS);
	assert_int_equal(entry(f, 0, 4), -1);
}

static void test_other_stream_and_unmapped(void **state)
{
	struct fix *f = *state;

	NEED_ROOT(f);
	publish(f, 0, 0);
	publish(f, 5, 0);
	xr_rq_retire(&f->qp, 0, 0);          /* stream 0 is the guarded one */
	xr_rq_retire(&f->qp, 5, 0);          /* another: deleted at once */
	assert_int_equal(entry(f, 5, 0), -1);
	assert_int_equal(f->evb[CONN].rq_stream, 0);
	assert_int_equal(f->evb[CONN].rq_done, 1);
	assert_int_equal(entry(f, 0, 0), 0);
	xr_rq_retire_flush(&f->qp);
	/* a device that could not map xr_evb deletes at once */
	xr_rq_retire_reset(&f->qp);
	f->dev.evb = NULL;
	publish(f, 0, 1);
	xr_rq_retire(&f->qp, 0, 1);
	assert_int_equal(entry(f, 0, 1), -1);
	assert_false(f->qp.rq_guarded);
}

static void test_reset_and_gone_entries(void **state)
{
	struct fix *f = *state;
	struct xr_rq_key k = { .conn = CONN, .stream = 2, .slot = 1 };

	NEED_ROOT(f);
	publish(f, 2, 0);
	publish(f, 2, 1);
	publish(f, 2, 2);
	xr_rq_retire(&f->qp, 2, 0);
	xr_rq_retire(&f->qp, 2, 1);
	xr_rq_retire(&f->qp, 2, 2);
	/* one of them deleted behind the batch's back: the rest still go */
	assert_int_equal(bpf_map_delete_elem(f->dev.maps.rq, &k), 0);
	xr_rq_retire_reset(&f->qp);
	assert_false(f->qp.rq_guarded);
	assert_int_equal(f->qp.rq_nretire, 0);
	assert_int_equal(entry(f, 2, 0), -1);
	assert_int_equal(entry(f, 2, 2), -1);
	/* the next completion guards afresh, on its own stream */
	publish(f, 3, 0);
	xr_rq_retire(&f->qp, 3, 0);
	assert_int_equal(f->evb[CONN].rq_stream, 3);
	assert_int_equal(f->evb[CONN].rq_done, 1);
	xr_rq_retire_flush_all(&f->dev);
	assert_int_equal(entry(f, 3, 0), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_guard_and_batch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_same_slot_not_deleted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_stream_and_unmapped, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_reset_and_gone_entries, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
