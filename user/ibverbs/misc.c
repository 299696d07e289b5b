// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The rest of libibverbs' ABI: strings, rate conversions, the sysfs and
 * kernel-ABI helpers other rdma-core libraries import (librdmacm), and the
 * verbs xroce does not have: address handles and multicast (UD), shared
 * receive queues, imported objects, enhanced connection establishment.
 * Those fail with EOPNOTSUPP and one line saying so, never crash.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/sa.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/ib_user_sa.h>

#include "xv.h"

/* ---- strings -------------------------------------------------------------- */

XV_EXPORT const char *ibv_wc_status_str(enum ibv_wc_status st)
{
	static const char *const s[] = {
		[IBV_WC_SUCCESS] = "success",
		[IBV_WC_LOC_LEN_ERR] = "local length error",
		[IBV_WC_LOC_QP_OP_ERR] = "local QP operation error",
		[IBV_WC_LOC_EEC_OP_ERR] = "local EE context operation error",
		[IBV_WC_LOC_PROT_ERR] = "local protection error",
		[IBV_WC_WR_FLUSH_ERR] = "Work Request Flushed Error",
		[IBV_WC_MW_BIND_ERR] = "memory management operation error",
		[IBV_WC_BAD_RESP_ERR] = "bad response error",
		[IBV_WC_LOC_ACCESS_ERR] = "local access error",
		[IBV_WC_REM_INV_REQ_ERR] = "remote invalid request error",
		[IBV_WC_REM_ACCESS_ERR] = "remote access error",
		[IBV_WC_REM_OP_ERR] = "remote operation error",
		[IBV_WC_RETRY_EXC_ERR] = "transport retry counter exceeded",
		[IBV_WC_RNR_RETRY_EXC_ERR] = "RNR retry counter exceeded",
		[IBV_WC_LOC_RDD_VIOL_ERR] = "local RDD violation error",
		[IBV_WC_REM_INV_RD_REQ_ERR] = "remote invalid RD request",
		[IBV_WC_REM_ABORT_ERR] = "aborted error",
		[IBV_WC_INV_EECN_ERR] = "invalid EE context number",
		[IBV_WC_INV_EEC_STATE_ERR] = "invalid EE context state",
		[IBV_WC_FATAL_ERR] = "fatal error",
		[IBV_WC_RESP_TIMEOUT_ERR] = "response timeout error",
		[IBV_WC_GENERAL_ERR] = "general error",
		[IBV_WC_TM_ERR] = "TM error",
		[IBV_WC_TM_RNDV_INCOMPLETE] = "TM software rendezvous",
	};

	if ((unsigned int)st < sizeof(s) / sizeof(s[0]) && s[st])
		return s[st];
	return "unknown";
}

XV_EXPORT const char *ibv_node_type_str(enum ibv_node_type t)
{
	switch (t) {
	case IBV_NODE_CA: return "InfiniBand channel adapter";
	case IBV_NODE_SWITCH: return "InfiniBand switch";
	case IBV_NODE_ROUTER: return "InfiniBand router";
	case IBV_NODE_RNIC: return "iWARP NIC";
	case IBV_NODE_USNIC: return "usNIC";
	case IBV_NODE_USNIC_UDP: return "usNIC UDP";
	case IBV_NODE_UNSPECIFIED: return "unspecified";
	default: return "unknown";
	}
}

XV_EXPORT const char *ibv_port_state_str(enum ibv_port_state s)
{
	switch (s) {
	case IBV_PORT_NOP: return "no state change (NOP)";
	case IBV_PORT_DOWN: return "down";
	case IBV_PORT_INIT: return "init";
	case IBV_PORT_ARMED: return "armed";
	case IBV_PORT_ACTIVE: return "active";
	case IBV_PORT_ACTIVE_DEFER: return "active defer";
	default: return "unknown";
	}
}

XV_EXPORT const char *ibv_event_type_str(enum ibv_event_type e)
{
	switch (e) {
	case IBV_EVENT_CQ_ERR: return "CQ error";
	case IBV_EVENT_QP_FATAL: return "local work queue catastrophic error";
	case IBV_EVENT_QP_REQ_ERR: return "invalid request local work queue error";
	case IBV_EVENT_QP_ACCESS_ERR: return "local access violation work queue error";
	case IBV_EVENT_COMM_EST: return "communication established";
	case IBV_EVENT_SQ_DRAINED: return "send queue drained";
	case IBV_EVENT_PATH_MIG: return "path migrated";
	case IBV_EVENT_PATH_MIG_ERR: return "path migration request error";
	case IBV_EVENT_DEVICE_FATAL: return "local catastrophic error";
	case IBV_EVENT_PORT_ACTIVE: return "port active";
	case IBV_EVENT_PORT_ERR: return "port error";
	case IBV_EVENT_LID_CHANGE: return "LID change";
	case IBV_EVENT_PKEY_CHANGE: return "P_Key change";
	case IBV_EVENT_SM_CHANGE: return "SM change";
	case IBV_EVENT_SRQ_ERR: return "SRQ catastrophic error";
	case IBV_EVENT_SRQ_LIMIT_REACHED: return "SRQ limit reached";
	case IBV_EVENT_QP_LAST_WQE_REACHED: return "last WQE reached";
	case IBV_EVENT_CLIENT_REREGISTER: return "client reregistration";
	case IBV_EVENT_GID_CHANGE: return "GID table change";
	case IBV_EVENT_WQ_FATAL: return "WQ fatal";
	default: return "unknown";
	}
}

/* ---- rates ---------------------------------------------------------------- */

/* Each rate: its signalling rate in Mbit/s as IB states it, and its
 * multiple of 2.5 Gbit/s where it has one. */
static const struct { enum ibv_rate rate; int mbps; int mult; } rates[] = {
	{ IBV_RATE_2_5_GBPS, 2500, 1 }, { IBV_RATE_5_GBPS, 5000, 2 },
	{ IBV_RATE_10_GBPS, 10000, 4 }, { IBV_RATE_20_GBPS, 20000, 8 },
	{ IBV_RATE_30_GBPS, 30000, 12 }, { IBV_RATE_40_GBPS, 40000, 16 },
	{ IBV_RATE_60_GBPS, 60000, 24 }, { IBV_RATE_80_GBPS, 80000, 32 },
	{ IBV_RATE_120_GBPS, 120000, 48 }, { IBV_RATE_14_GBPS, 14062, 0 },
	{ IBV_RATE_56_GBPS, 56250, 0 }, { IBV_RATE_112_GBPS, 112500, 0 },
	{ IBV_RATE_168_GBPS, 168750, 0 }, { IBV_RATE_25_GBPS, 25781, 0 },
	{ IBV_RATE_100_GBPS, 103125, 0 }, { IBV_RATE_200_GBPS, 206250, 0 },
	{ IBV_RATE_300_GBPS, 309375, 0 }, { IBV_RATE_28_GBPS, 28125, 11 },
	{ IBV_RATE_50_GBPS, 53125, 20 }, { IBV_RATE_400_GBPS, 425000, 160 },
	{ IBV_RATE_600_GBPS, 637500, 240 }, { IBV_RATE_800_GBPS, 850000, 320 },
	{ IBV_RATE_1200_GBPS, 1275000, 480 },
};
#define NRATES (sizeof(rates) / sizeof(rates[0]))

XV_EXPORT int ibv_rate_to_mult(enum ibv_rate rate)
{
	size_t i;

	for (i = 0; i < NRATES; i++)
		if (rates[i].rate == rate && rates[i].mult)
			return rates[i].mult;
	return -1;
}

XV_EXPORT enum ibv_rate mult_to_ibv_rate(int mult)
{
	size_t i;

	for (i = 0; i < NRATES; i++)
		if (rates[i].mult == mult && mult)
			return rates[i].rate;
	return IBV_RATE_MAX;
}

XV_EXPORT int ibv_rate_to_mbps(enum ibv_rate rate)
{
	size_t i;

	for (i = 0; i < NRATES; i++)
		if (rates[i].rate == rate)
			return rates[i].mbps;
	return -1;
}

XV_EXPORT enum ibv_rate mbps_to_ibv_rate(int mbps)
{
	size_t i;

	for (i = 0; i < NRATES; i++)
		if (rates[i].mbps == mbps)
			return rates[i].rate;
	return IBV_RATE_MAX;
}

/* ---- sysfs and the kernel ABI ---------------------------------------------- */

XV_EXPORT const char *ibv_get_sysfs_path(void)
{
	const char *env = getenv("SYSFS_PATH");

	return env && *env ? env : "/sys";
}

XV_EXPORT int ibv_read_sysfs_file(const char *dir, const char *file, char *buf,
				  size_t size)
{
	char path[512];
	ssize_t n;
	int fd;

	if (!dir || !file || !buf || !size)
		return -1;
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, size);
	close(fd);
	if (n <= 0)
		return -1;
	if ((size_t)n == size)
		n--;
	buf[n] = 0;
	if (n && buf[n - 1] == '\n')
		buf[--n] = 0;
	return (int)n;
}

XV_EXPORT void ibv_copy_ah_attr_from_kern(struct ibv_ah_attr *dst,
					  struct ib_uverbs_ah_attr *src)
{
	memcpy(dst->grh.dgid.raw, src->grh.dgid, 16);
	dst->grh.flow_label = src->grh.flow_label;
	dst->grh.sgid_index = src->grh.sgid_index;
	dst->grh.hop_limit = src->grh.hop_limit;
	dst->grh.traffic_class = src->grh.traffic_class;
	dst->dlid = src->dlid;
	dst->sl = src->sl;
	dst->src_path_bits = src->src_path_bits;
	dst->static_rate = src->static_rate;
	dst->is_global = src->is_global;
	dst->port_num = src->port_num;
}

XV_EXPORT void ibv_copy_qp_attr_from_kern(struct ibv_qp_attr *dst,
					  struct ib_uverbs_qp_attr *src)
{
	dst->qp_state = src->qp_state;
	dst->cur_qp_state = src->cur_qp_state;
	dst->path_mtu = src->path_mtu;
	dst->path_mig_state = src->path_mig_state;
	dst->qkey = src->qkey;
	dst->rq_psn = src->rq_psn;
	dst->sq_psn = src->sq_psn;
	dst->dest_qp_num = src->dest_qp_num;
	dst->qp_access_flags = src->qp_access_flags;
	dst->cap.max_send_wr = src->max_send_wr;
	dst->cap.max_recv_wr = src->max_recv_wr;
	dst->cap.max_send_sge = src->max_send_sge;
	dst->cap.max_recv_sge = src->max_recv_sge;
	dst->cap.max_inline_data = src->max_inline_data;
	ibv_copy_ah_attr_from_kern(&dst->ah_attr, &src->ah_attr);
	ibv_copy_ah_attr_from_kern(&dst->alt_ah_attr, &src->alt_ah_attr);
	dst->pkey_index = src->pkey_index;
	dst->alt_pkey_index = src->alt_pkey_index;
	dst->en_sqd_async_notify = src->en_sqd_async_notify;
	dst->sq_draining = src->sq_draining;
	dst->max_rd_atomic = src->max_rd_atomic;
	dst->max_dest_rd_atomic = src->max_dest_rd_atomic;
	dst->min_rnr_timer = src->min_rnr_timer;
	dst->port_num = src->port_num;
	dst->timeout = src->timeout;
	dst->retry_cnt = src->retry_cnt;
	dst->rnr_retry = src->rnr_retry;
	dst->alt_port_num = src->alt_port_num;
	dst->alt_timeout = src->alt_timeout;
}

XV_EXPORT void ibv_copy_path_rec_from_kern(struct ibv_sa_path_rec *dst,
					   struct ib_user_path_rec *src)
{
	memcpy(dst->dgid.raw, src->dgid, 16);
	memcpy(dst->sgid.raw, src->sgid, 16);
	dst->dlid = src->dlid;
	dst->slid = src->slid;
	dst->raw_traffic = (int)src->raw_traffic;
	dst->flow_label = src->flow_label;
	dst->hop_limit = src->hop_limit;
	dst->traffic_class = src->traffic_class;
	dst->reversible = (int)src->reversible;
	dst->numb_path = src->numb_path;
	dst->pkey = src->pkey;
	dst->sl = src->sl;
	dst->mtu_selector = src->mtu_selector;
	dst->mtu = (uint8_t)src->mtu;
	dst->rate_selector = src->rate_selector;
	dst->rate = src->rate;
	dst->packet_life_time_selector = src->packet_life_time_selector;
	dst->packet_life_time = src->packet_life_time;
	dst->preference = src->preference;
}

XV_EXPORT void ibv_copy_path_rec_to_kern(struct ib_user_path_rec *dst,
					 struct ibv_sa_path_rec *src)
{
	memcpy(dst->dgid, src->dgid.raw, 16);
	memcpy(dst->sgid, src->sgid.raw, 16);
	dst->dlid = src->dlid;
	dst->slid = src->slid;
	dst->raw_traffic = (__u32)src->raw_traffic;
	dst->flow_label = src->flow_label;
	dst->hop_limit = src->hop_limit;
	dst->traffic_class = src->traffic_class;
	dst->reversible = (__u32)src->reversible;
	dst->numb_path = src->numb_path;
	dst->pkey = src->pkey;
	dst->sl = src->sl;
	dst->mtu_selector = src->mtu_selector;
	dst->mtu = src->mtu;
	dst->rate_selector = src->rate_selector;
	dst->rate = src->rate;
	dst->packet_life_time_selector = src->packet_life_time_selector;
	dst->packet_life_time = src->packet_life_time;
	dst->preference = src->preference;
}

/* Providers register through this in old libibverbs; xroce has one. */
XV_EXPORT void ibv_register_driver(const char *name, void *init_func)
{
	(void)init_func;
	xv_log("ibv_register_driver(%s): ignored, this libibverbs runs on xroce",
	       name ? name : "?");
}

/* ---- what xroce does not have ------------------------------------------------ */

#define NO_UD "xroce has reliable connected QPs only (no UD address handles "\
	      "or multicast)"

XV_EXPORT struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	(void)pd; (void)attr;
	return xv_null(EOPNOTSUPP, "ibv_create_ah: " NO_UD);
}

XV_EXPORT int ibv_destroy_ah(struct ibv_ah *ah)
{
	(void)ah;
	return xv_fail(EOPNOTSUPP, "ibv_destroy_ah: " NO_UD);
}

XV_EXPORT int ibv_init_ah_from_wc(struct ibv_context *c, uint8_t port,
				  struct ibv_wc *wc, struct ibv_grh *grh,
				  struct ibv_ah_attr *attr)
{
	(void)c; (void)port; (void)wc; (void)grh; (void)attr;
	return xv_fail(EOPNOTSUPP, "ibv_init_ah_from_wc: " NO_UD);
}

XV_EXPORT struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc,
					       struct ibv_grh *grh, uint8_t port)
{
	(void)pd; (void)wc; (void)grh; (void)port;
	return xv_null(EOPNOTSUPP, "ibv_create_ah_from_wc: " NO_UD);
}

XV_EXPORT int ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			       uint16_t lid)
{
	(void)qp; (void)gid; (void)lid;
	return xv_fail(EOPNOTSUPP, "ibv_attach_mcast: " NO_UD);
}

XV_EXPORT int ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			       uint16_t lid)
{
	(void)qp; (void)gid; (void)lid;
	return xv_fail(EOPNOTSUPP, "ibv_detach_mcast: " NO_UD);
}

XV_EXPORT int ibv_resolve_eth_l2_from_gid(struct ibv_context *c,
					  struct ibv_ah_attr *attr,
					  uint8_t eth_mac[6], uint16_t *vid)
{
	(void)c; (void)attr; (void)eth_mac; (void)vid;
	return xv_fail(EOPNOTSUPP, "ibv_resolve_eth_l2_from_gid: xroce resolves "
		       "its next hops itself");
}

#define NO_IMPORT "xroce objects cannot be shared between processes"

XV_EXPORT struct ibv_context *ibv_import_device(int cmd_fd)
{
	(void)cmd_fd;
	return xv_null(EOPNOTSUPP, "ibv_import_device: " NO_IMPORT);
}

XV_EXPORT struct ibv_pd *ibv_import_pd(struct ibv_context *c, uint32_t handle)
{
	(void)c; (void)handle;
	return xv_null(EOPNOTSUPP, "ibv_import_pd: " NO_IMPORT);
}

XV_EXPORT void ibv_unimport_pd(struct ibv_pd *pd)
{
	(void)pd;
}

XV_EXPORT struct ibv_mr *ibv_import_mr(struct ibv_pd *pd, uint32_t handle)
{
	(void)pd; (void)handle;
	return xv_null(EOPNOTSUPP, "ibv_import_mr: " NO_IMPORT);
}

XV_EXPORT void ibv_unimport_mr(struct ibv_mr *mr)
{
	(void)mr;
}

XV_EXPORT struct ibv_dm *ibv_import_dm(struct ibv_context *c, uint32_t handle)
{
	(void)c; (void)handle;
	return xv_null(EOPNOTSUPP, "ibv_import_dm: " NO_IMPORT);
}

XV_EXPORT void ibv_unimport_dm(struct ibv_dm *dm)
{
	(void)dm;
}

XV_EXPORT int ibv_set_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	(void)qp; (void)ece;
	return xv_fail(EOPNOTSUPP, "ibv_set_ece: no enhanced connection "
		       "establishment in xroce");
}

XV_EXPORT int ibv_query_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	(void)qp; (void)ece;
	/* As a device without ECE: not an error worth a line. */
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

/* Data is placed as it arrives, in any order (no reorder buffer):
 * never in order. */
XV_EXPORT int ibv_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op,
					 uint32_t flags)
{
	(void)qp; (void)op; (void)flags;
	return 0;
}
