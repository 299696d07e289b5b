/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Header MACs of keyed connections (include/contract/wire.h, "Keyed
 * connections"; docs/PROTOCOL.md): the keys of each key epoch, the MACs of
 * the DATA and PROBEs we send, the keys XDP needs in the connection entry,
 * and the move of each side's packet stream from one epoch to the next
 * well before a PSN or CSN could repeat under one key.
 */
#ifndef XR_ENGINE_KEYS_H
#define XR_ENGINE_KEYS_H

#include <stdbool.h>
#include <stdint.h>

#include "qp.h"

/* Transmissions one key epoch may last by default: with at most three
 * epochs' keys alive (the one in use, the one before, the one after),
 * no PSN or CSN repeats under a key (2^31 apart), so a recorded packet
 * never passes for a new one.  XROCE_KEY_EPOCH_PKTS shortens it for
 * tests. */
#define XR_KEY_EPOCH_PKTS (1ull << 28)

/* qp->conn_key is set: start epoch 0 (client: we connected). */
void xr_keys_init(struct xroce_qp *qp, bool client);
/* The keys of epochs 0 and 1 both ways, for the connection entry. */
void xr_keys_fill_conn(const struct xroce_qp *qp, struct xr_conn *c);
/* Sign a DATA header about to be sent (its last field set), moving to the
 * next epoch first when it is time and the peer is ready. */
void xr_keys_sign_data(struct xroce_qp *qp, struct xr_data_hdr *h);
void xr_keys_sign_probe(const struct xroce_qp *qp, struct xr_probe_hdr *h);
/* True if our stream used up its epoch and waits for the peer. */
bool xr_keys_blocked(const struct xroce_qp *qp);
/* An answer (ACK, NAK, PROBE_REPLY record) XDP checked under our epoch
 * key_epoch, with its flags as they came (knext_flag: XR_AF_KNEXT or
 * XR_PF_KNEXT). */
void xr_keys_on_answer(struct xroce_qp *qp, uint8_t flags, uint32_t key_epoch,
		       uint8_t knext_flag);
/* The peer's stream moved to epoch (XR_EVT_REKEY): install the next. */
void xr_keys_on_rekey(struct xroce_qp *qp, uint32_t epoch);
/* While blocked, the peer is probed for its readiness: the path to probe
 * now (-1: none), and in *next when to ask again (UINT64_MAX: not
 * blocked). */
int xr_keys_probe(struct xroce_qp *qp, uint64_t now, uint64_t *next);

#endif /* XR_ENGINE_KEYS_H */
