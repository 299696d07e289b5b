// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ibv_modify_qp: the RC state machine with the attribute masks the kernel
 * requires for each transition, and what each state means on xroce:
 *
 *   RESET -> INIT   port, P_Key index and access flags are recorded
 *   INIT  -> RTR    xroce_qp_bind(peer GID, peer QPN): the connection
 *                   exchange starts, without blocking; receives land from
 *                   the moment the peer's half is programmed
 *   RTR   -> RTS    the requester's limits (timeout x retries, RNR retries)
 *                   go to the bound QP; sends posted go out once the
 *                   exchange is complete
 *   any   -> ERR    xroce_qp_to_error: everything outstanding is flushed
 *
 * IB packet sequence numbers (rq_psn, sq_psn) and the path MTU are kept for
 * ibv_query_qp; xroce numbers packets per path and sizes them to the
 * interface MTU.  Going back to RESET, SQD and SQE are not supported.
 */
#include <errno.h>
#include <string.h>

#include "xv.h"

#define M_(x) IBV_QP_##x

/* Required and optional attributes per transition (RC), as the kernel's
 * ib_modify_qp_is_ok. */
struct trans {
	enum ibv_qp_state from, to;
	int req, opt;
};

static const struct trans table[] = {
	{ IBV_QPS_RESET, IBV_QPS_INIT,
	  M_(PKEY_INDEX) | M_(PORT) | M_(ACCESS_FLAGS), 0 },
	{ IBV_QPS_INIT, IBV_QPS_INIT, 0,
	  M_(PKEY_INDEX) | M_(PORT) | M_(ACCESS_FLAGS) },
	{ IBV_QPS_INIT, IBV_QPS_RTR,
	  M_(AV) | M_(PATH_MTU) | M_(DEST_QPN) | M_(RQ_PSN) |
	  M_(MAX_DEST_RD_ATOMIC) | M_(MIN_RNR_TIMER),
	  M_(ALT_PATH) | M_(ACCESS_FLAGS) | M_(PKEY_INDEX) },
	{ IBV_QPS_RTR, IBV_QPS_RTS,
	  M_(SQ_PSN) | M_(TIMEOUT) | M_(RETRY_CNT) | M_(RNR_RETRY) |
	  M_(MAX_QP_RD_ATOMIC),
	  M_(CUR_STATE) | M_(ALT_PATH) | M_(ACCESS_FLAGS) | M_(MIN_RNR_TIMER) |
	  M_(PATH_MIG_STATE) },
	{ IBV_QPS_RTS, IBV_QPS_RTS, 0,
	  M_(CUR_STATE) | M_(ACCESS_FLAGS) | M_(ALT_PATH) | M_(PATH_MIG_STATE) |
	  M_(MIN_RNR_TIMER) },
};

/* IB's RNR timer encoding (min_rnr_timer), in microseconds. */
static uint32_t rnr_us(uint8_t code)
{
	static const uint32_t t[32] = {
		655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960,
		1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
		40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
	};

	return t[code & 31];
}

/* IB's local ACK timeout, 4.096 us << timeout, tried retry_cnt + 1 times,
 * is how long the requester waits for the responder: xroce's peer silence
 * limit.  0 means infinite.  Software timers are held to a floor. */
static uint32_t timeout_ms(uint8_t timeout, uint8_t retry)
{
	uint64_t us;

	if (!timeout || timeout >= 31)
		return 0x7fffffff;
	us = (4096ull << timeout) / 1000 * (uint64_t)((retry & 7) + 1);
	us /= 1000;
	if (us < XV_MIN_TIMEOUT_MS)
		us = XV_MIN_TIMEOUT_MS;
	return us > 0x7fffffff ? 0x7fffffff : (uint32_t)us;
}

static int to_error(struct xv_qp *qp)
{
	int rc = xroce_qp_to_error(qp->xqp);

	if (rc)
		return xv_lib_err(rc);
	xv_qp_mark_error(qp);
	return 0;
}

static int to_rtr(struct xv_qp *qp, const struct ibv_qp_attr *a)
{
	struct xroce_qp_peer peer;
	const union ibv_gid *dgid = &a->ah_attr.grh.dgid;
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };
	int sidx = a->ah_attr.grh.sgid_index, rc;

	if (!a->ah_attr.is_global)
		return xv_fail(EINVAL, "ibv_modify_qp(RTR): xroce addresses peers by "
			       "GID, as RoCE does: set ah_attr.is_global and "
			       "grh.dgid (ibv_rc_pingpong -g, perftest -x)");
	if (a->ah_attr.port_num > 1)
		return xv_fail(EINVAL, "ibv_modify_qp(RTR): port %u", a->ah_attr.port_num);
	if (sidx >= qp->ctx->ngids)
		return xv_fail(EINVAL, "ibv_modify_qp(RTR): source GID index %d (the "
			       "port has %d GIDs)", sidx, qp->ctx->ngids);
	if (!memcmp(dgid->raw, mapped, 12) !=
	    !memcmp(qp->ctx->gids[sidx].gid.raw, mapped, 12))
		return xv_fail(EINVAL, "ibv_modify_qp(RTR): source GID %d and the "
			       "destination GID are of different IP families", sidx);
	if (!a->dest_qp_num)
		return xv_fail(EINVAL, "ibv_modify_qp(RTR): destination QP 0");
	memset(&peer, 0, sizeof(peer));
	memcpy(peer.addr, dgid->raw, 16);
	peer.qp_num = a->dest_qp_num;
	peer.rnr_timer_us = rnr_us(a->min_rnr_timer);
	rc = xroce_qp_bind(qp->xqp, &peer);
	if (rc)
		return xv_lib_err(rc);
	return 0;
}

/* The requester's limits, to the QP bound at RTR. */
static int limits(struct xv_qp *qp, const struct ibv_qp_attr *a, int mask)
{
	struct xroce_qp_peer peer;
	int rc;

	memset(&peer, 0, sizeof(peer));
	memcpy(peer.addr, qp->attr.ah_attr.grh.dgid.raw, 16);
	peer.qp_num = qp->attr.dest_qp_num;
	if (mask & (IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT))
		peer.timeout_ms = timeout_ms(mask & IBV_QP_TIMEOUT ? a->timeout :
					     qp->attr.timeout,
					     mask & IBV_QP_RETRY_CNT ? a->retry_cnt :
					     qp->attr.retry_cnt);
	if (mask & IBV_QP_RNR_RETRY)
		/* 7 is "retry forever"; xroce cannot say "never retry": 0 is
		 * one retry. */
		peer.rnr_retry = a->rnr_retry >= 7 ? UINT32_MAX :
				 a->rnr_retry ? a->rnr_retry : 1;
	if (!peer.timeout_ms && !peer.rnr_retry)
		return 0;
	rc = xroce_qp_bind(qp->xqp, &peer);
	return rc ? xv_lib_err(rc) : 0;
}

static void record(struct xv_qp *qp, const struct ibv_qp_attr *a, int mask)
{
	struct ibv_qp_attr *r = &qp->attr;

	if (mask & IBV_QP_ACCESS_FLAGS)
		r->qp_access_flags = a->qp_access_flags;
	if (mask & IBV_QP_PKEY_INDEX)
		r->pkey_index = a->pkey_index;
	if (mask & IBV_QP_PORT)
		r->port_num = a->port_num;
	if (mask & IBV_QP_AV)
		r->ah_attr = a->ah_attr;
	if (mask & IBV_QP_PATH_MTU)
		r->path_mtu = a->path_mtu;
	if (mask & IBV_QP_DEST_QPN)
		r->dest_qp_num = a->dest_qp_num;
	if (mask & IBV_QP_RQ_PSN)
		r->rq_psn = a->rq_psn;
	if (mask & IBV_QP_SQ_PSN)
		r->sq_psn = a->sq_psn;
	if (mask & IBV_QP_MAX_DEST_RD_ATOMIC)
		r->max_dest_rd_atomic = a->max_dest_rd_atomic;
	if (mask & IBV_QP_MAX_QP_RD_ATOMIC)
		r->max_rd_atomic = a->max_rd_atomic;
	if (mask & IBV_QP_MIN_RNR_TIMER)
		r->min_rnr_timer = a->min_rnr_timer;
	if (mask & IBV_QP_TIMEOUT)
		r->timeout = a->timeout;
	if (mask & IBV_QP_RETRY_CNT)
		r->retry_cnt = a->retry_cnt;
	if (mask & IBV_QP_RNR_RETRY)
		r->rnr_retry = a->rnr_retry;
	if (mask & IBV_QP_ALT_PATH) {
		r->alt_ah_attr = a->alt_ah_attr;
		r->alt_pkey_index = a->alt_pkey_index;
		r->alt_port_num = a->alt_port_num;
		r->alt_timeout = a->alt_timeout;
	}
	if (mask & IBV_QP_PATH_MIG_STATE)
		r->path_mig_state = a->path_mig_state;
}

XV_EXPORT int ibv_modify_qp(struct ibv_qp *q, struct ibv_qp_attr *a, int mask)
{
	struct xv_qp *qp = q ? xv_qp(q) : NULL;
	enum ibv_qp_state cur, to;
	const struct trans *t = NULL;
	size_t i;
	int rc;

	if (!qp || !a)
		return EINVAL;
	if (xroce_qp_state(qp->xqp) == XROCE_QPS_ERR)
		qp->attr.qp_state = IBV_QPS_ERR;
	cur = qp->attr.qp_state;
	if ((mask & IBV_QP_CUR_STATE) && a->cur_qp_state != cur)
		return xv_fail(EINVAL, "ibv_modify_qp: current state is %d, not %d",
			       cur, a->cur_qp_state);
	to = mask & IBV_QP_STATE ? a->qp_state : cur;
	if (to == IBV_QPS_ERR) {
		rc = to_error(qp);
		if (!rc)
			q->state = qp->attr.qp_state = IBV_QPS_ERR;
		return rc;
	}
	if (to == IBV_QPS_RESET && cur == IBV_QPS_RESET)
		return 0;
	if (to == IBV_QPS_RESET || to == IBV_QPS_SQD || to == IBV_QPS_SQE ||
	    cur == IBV_QPS_ERR || cur == IBV_QPS_SQD || cur == IBV_QPS_SQE)
		return xv_fail(EOPNOTSUPP, "ibv_modify_qp: %d -> %d: xroce QPs go "
			       "RESET -> INIT -> RTR -> RTS -> ERR only (destroy and "
			       "create a QP to reuse it)", cur, to);
	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (table[i].from == cur && table[i].to == to)
			t = &table[i];
	if (!t)
		return xv_fail(EINVAL, "ibv_modify_qp: no transition %d -> %d", cur, to);
	mask &= ~(IBV_QP_STATE | IBV_QP_CUR_STATE);
	if ((mask & t->req) != t->req || (mask & ~(t->req | t->opt)))
		return xv_fail(EINVAL, "ibv_modify_qp: %d -> %d needs attributes %#x "
			       "and allows %#x; got %#x", cur, to, t->req, t->opt, mask);
	if ((mask & IBV_QP_PORT) && a->port_num != 1)
		return xv_fail(EINVAL, "ibv_modify_qp: port %u (the device has port 1)",
			       a->port_num);
	if ((mask & IBV_QP_PKEY_INDEX) && a->pkey_index != 0)
		return xv_fail(EINVAL, "ibv_modify_qp: P_Key index %u (the table has "
			       "one entry)", a->pkey_index);
	if ((mask & IBV_QP_ACCESS_FLAGS) &&
	    (a->qp_access_flags & ~(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)))
		return xv_fail(EINVAL, "ibv_modify_qp: access flags %#x",
			       a->qp_access_flags);
	if (cur == IBV_QPS_INIT && to == IBV_QPS_RTR) {
		rc = to_rtr(qp, a);
		if (rc)
			return rc;
	}
	record(qp, a, mask);
	if (to == IBV_QPS_RTS) {
		rc = limits(qp, a, mask);
		if (rc)
			return rc;
	}
	q->state = qp->attr.qp_state = to;
	return 0;
}
