// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Header MACs of keyed connections.  Every key comes from the connection
 * key through libsodium (auth.c, xr_auth_mac_key); this file decides which
 * one is used when.
 *
 * Each side owns a packet stream: its DATA and PROBEs, and the peer's
 * answers to them (ACK, NAK, PROBE_REPLY).  The stream's key epoch starts
 * at 0; XDP's connection entry holds two epochs per stream, one slot per
 * parity, and set-up installs epochs 0 and 1 both ways.  The owner moves
 * its stream to epoch E + 1 once it sent half an epoch's worth under E and
 * an answer of epoch E said XR_AF_KNEXT (the peer holds E + 1); first it
 * installs its own slot for E + 1 (to check the peer's answers).  It never
 * sends more than an epoch's worth under one key: at the limit it stops
 * and probes until the peer is ready.  The peer's XDP reports the first
 * packet of E + 1 (XR_EVT_REKEY) and the peer's library replaces E, now
 * spent, with E + 2, which is what XR_AF_KNEXT then reports.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

#include "auth.h"
#include "device.h"
#include "keys.h"
#include "contract/siphash.h"

#define XR_KEY_PROBE_NS 1000000ull /* probe every 1 ms while blocked */
#define XR_KEY_EPOCH_MIN 16ull

/* Owners of packet streams: the connecting side's is 0. */
static int own_owner(const struct xroce_qp *qp)
{
	return qp->mk.client ? 0 : 1;
}

static uint64_t epoch_pkts(void)
{
	const char *env = getenv("XROCE_KEY_EPOCH_PKTS");
	unsigned long long v;
	char *end;

	if (!env || !*env)
		return XR_KEY_EPOCH_PKTS;
	v = strtoull(env, &end, 0);
	if (*end || v < XR_KEY_EPOCH_MIN || v > XR_KEY_EPOCH_PKTS)
		return XR_KEY_EPOCH_PKTS;
	return v;
}

void xr_keys_init(struct xroce_qp *qp, bool client)
{
	struct xr_qkeys *k = &qp->mk;

	memset(k, 0, sizeof(*k));
	k->on = true;
	k->client = client;
	k->horizon = epoch_pkts();
	k->peer_epoch[1] = 1;
	xr_auth_mac_key(qp->conn_key, 0, own_owner(qp), 0, k->data);
}

/* Slot epoch & 1 of the peer's stream: its data and reply keys. */
static void peer_slot(const struct xroce_qp *qp, uint32_t epoch,
		      struct xr_key_peer *s)
{
	memset(s, 0, sizeof(*s));
	xr_auth_mac_key(qp->conn_key, epoch, !own_owner(qp), 0, s->data);
	xr_auth_mac_key(qp->conn_key, epoch, !own_owner(qp), 1, s->reply);
	s->epoch = epoch;
}

static void own_slot(const struct xroce_qp *qp, uint32_t epoch,
		     struct xr_key_own *s)
{
	memset(s, 0, sizeof(*s));
	xr_auth_mac_key(qp->conn_key, epoch, own_owner(qp), 1, s->reply);
	s->epoch = epoch;
}

void xr_keys_fill_conn(const struct xroce_qp *qp, struct xr_conn *c)
{
	uint32_t e;

	if (!qp->mk.on)
		return;
	c->flags |= XR_CONN_F_MAC;
	for (e = 0; e < 2; e++) {
		peer_slot(qp, e, &c->kpeer[e]);
		own_slot(qp, e, &c->kown[e]);
	}
}

/* Rewrite one slot of the connection entry (the rest as XDP has it). */
static int install(struct xroce_qp *qp, const struct xr_key_peer *peer,
		   const struct xr_key_own *own)
{
	struct xr_conn c;

	if (bpf_map_lookup_elem(qp->dev->maps.conns, &qp->conn_id, &c))
		return -errno;
	if (peer)
		c.kpeer[peer->epoch & 1] = *peer;
	if (own)
		c.kown[own->epoch & 1] = *own;
	if (bpf_map_update_elem(qp->dev->maps.conns, &qp->conn_id, &c, BPF_EXIST))
		return -errno;
	return 0;
}

/* Our stream moves to the next epoch: our slot for it first, so that the
 * peer's first answers under it are checked. */
static void next_epoch(struct xroce_qp *qp)
{
	struct xr_qkeys *k = &qp->mk;
	struct xr_key_own own;
	int rc;

	own_slot(qp, k->epoch + 1, &own);
	rc = install(qp, NULL, &own);
	if (rc) {
		xr_log(&qp->dev->log, XROCE_LOG_DEBUG, "qp %u: key epoch %u not "
		       "installed: %s", qp->conn_id, k->epoch + 1, strerror(-rc));
		return;
	}
	k->epoch++;
	xr_auth_mac_key(qp->conn_key, k->epoch, own_owner(qp), 0, k->data);
	k->sent = 0;
	k->next_ready = false;
	k->epochs++;
}

void xr_keys_sign_data(struct xroce_qp *qp, struct xr_data_hdr *h)
{
	struct xr_qkeys *k = &qp->mk;

	if (!k->on)
		return;
	if (k->next_ready && k->sent >= k->horizon / 2)
		next_epoch(qp);
	if (k->epoch & 1)
		h->flags |= XR_DF_EPOCH;
	xr_le64_store(h->mac, xr_mac_hdr(k->data[0], k->data[1], h, sizeof(*h)));
	k->sent++;
}

void xr_keys_sign_probe(const struct xroce_qp *qp, struct xr_probe_hdr *h)
{
	const struct xr_qkeys *k = &qp->mk;

	if (!k->on)
		return;
	h->flags = k->epoch & 1 ? XR_PF_EPOCH : 0;
	xr_le64_store(h->mac, xr_mac_hdr(k->data[0], k->data[1], h, sizeof(*h)));
}

bool xr_keys_blocked(const struct xroce_qp *qp)
{
	return qp->mk.on && qp->mk.sent >= qp->mk.horizon && !qp->mk.next_ready;
}

void xr_keys_on_answer(struct xroce_qp *qp, uint8_t flags, uint32_t key_epoch,
		       uint8_t knext_flag)
{
	struct xr_qkeys *k = &qp->mk;

	/* Only an answer under the current epoch's key speaks for it: an
	 * older one's "next" is the current epoch. */
	if (k->on && key_epoch == k->epoch && (flags & knext_flag))
		k->next_ready = true;
}

void xr_keys_on_rekey(struct xroce_qp *qp, uint32_t epoch)
{
	struct xr_qkeys *k = &qp->mk;
	struct xr_key_peer peer;
	uint32_t s = (epoch + 1) & 1;
	int rc;

	/* Only the move we expect: epoch in its slot, epoch - 1 in the other
	 * (a repeated report finds epoch + 1 there already). */
	if (!k->on || k->peer_epoch[epoch & 1] != epoch ||
	    k->peer_epoch[s] + 1 != epoch)
		return;
	peer_slot(qp, epoch + 1, &peer);
	rc = install(qp, &peer, NULL);
	if (rc) {
		xr_log(&qp->dev->log, XROCE_LOG_WARN, "qp %u: cannot install the "
		       "peer's key epoch %u: %s", qp->conn_id, epoch + 1,
		       strerror(-rc));
		return;
	}
	k->peer_epoch[s] = epoch + 1;
}

int xr_keys_probe(struct xroce_qp *qp, uint64_t now, uint64_t *next)
{
	struct xr_qkeys *k = &qp->mk;
	int path = -1;

	*next = UINT64_MAX;
	if (!xr_keys_blocked(qp))
		return -1;
	if (now >= k->probe_ns) {
		path = (int)(k->waits++ % qp->npaths);
		k->probe_ns = now + XR_KEY_PROBE_NS;
	}
	*next = k->probe_ns;
	return path;
}
