/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* A queue pair's state in the library and in XDP's connection map. */
#ifndef XR_ENGINE_QP_STATE_H
#define XR_ENGINE_QP_STATE_H

#include "qp.h"

/* Publish the connected state (RTS) with the peer's initial PSN/CSN and
 * entropy port range; the peer's identity is already in qp. */
int xr_qp_program(struct xroce_qp *qp, uint32_t peer_init_psn,
		  uint32_t peer_init_csn, uint16_t peer_sport_lo,
		  uint16_t peer_sport_n);
int xr_qp_set_map_state(struct xroce_qp *qp, uint32_t state);
/* Move the QP to the error state: fail outstanding work with status (the
 * first request) and XROCE_WC_WR_FLUSH_ERR (the rest). */
void xr_qp_fail(struct xroce_qp *qp, enum xroce_wc_status status,
		const char *why);
/* Complete every outstanding send work request with errors (the first not
 * yet failed with `first`, the rest as flushed), then the receives. */
void xr_qp_flush_sq(struct xroce_qp *qp, enum xroce_wc_status first);
/* Free what a finished work request holds (scatter list, READ window). */
void xr_qp_release_wr(struct xroce_qp *qp, struct xr_swr *w);

#endif /* XR_ENGINE_QP_STATE_H */
