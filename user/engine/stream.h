/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The receiving side of a queue pair: streams, posted receives (published
 * to XDP), messages that completed here, and their delivery in stream
 * order as receive completions; peers' READ requests join the queue here.
 */
#ifndef XR_ENGINE_STREAM_H
#define XR_ENGINE_STREAM_H

#include "qp.h"

/* Stream id of qp, created on first use; NULL if id is out of range or
 * memory is short. */
struct xr_stream *xr_stream_get(struct xroce_qp *qp, uint16_t id);
void xr_qp_free_streams(struct xroce_qp *qp);
/* XDP saw a message's last byte land (event record). */
void xr_qp_on_recv(struct xroce_qp *qp, const struct xr_evt *e);
/* A SEND found no receive posted (event record XR_EVT_RNR). */
void xr_qp_on_rnr(struct xroce_qp *qp, const struct xr_evt *e);
/* A peer asks to read our memory (XDP validated key, bounds, rights). */
void xr_qp_on_read_req(struct xroce_qp *qp, const struct xr_evt *e);
/* Receive completions of every stream, as far as each is in order. */
void xr_qp_deliver(struct xroce_qp *qp);
/* Posted receives complete as flushed (QP destroyed or failed). */
void xr_qp_flush_recv(struct xroce_qp *qp);

#endif /* XR_ENGINE_STREAM_H */
