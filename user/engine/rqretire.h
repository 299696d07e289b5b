/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Completed receives leave xr_rq (the receives XDP places SENDs into):
 * at once, one map deletion each, or, on the connection's guarded stream,
 * behind XDP's guard (xr_evb.rq_done) and in batches.  rqretire.c says
 * why and how.
 */
#ifndef XR_ENGINE_RQRETIRE_H
#define XR_ENGINE_RQRETIRE_H

#include <stdint.h>

struct xroce_device;
struct xroce_qp;

/* Receive msn of stream has completed (its CQE is about to go to the
 * application): no SEND may land in it any more. */
void xr_rq_retire(struct xroce_qp *qp, uint16_t stream, uint32_t msn);

/* Receive msn of stream is about to be published: a retirement still
 * waiting for the same xr_rq entry (same slot) must not delete it. */
void xr_rq_retire_posting(struct xroce_qp *qp, uint16_t stream, uint32_t msn);

/* Delete the entries of every retirement still waiting (QP teardown). */
void xr_rq_retire_flush(struct xroce_qp *qp);

/* The same for every QP of the device (xr_rq full: room for a
 * publication). */
void xr_rq_retire_flush_all(struct xroce_device *dev);

/* xr_rq_retire_flush, and no stream guarded any more: the connection's
 * xr_evb entry is being reset (a connection is programmed). */
void xr_rq_retire_reset(struct xroce_qp *qp);

/* Delete the xr_rq entry of receive msn of stream now. */
void xr_rq_unpublish(struct xroce_qp *qp, uint16_t stream, uint32_t msn);

#endif /* XR_ENGINE_RQRETIRE_H */
