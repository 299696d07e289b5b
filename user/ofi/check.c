// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fi_getinfo's filtering: hints the provider cannot meet make it answer
 * -FI_ENODATA, the rule libfabric's own providers follow (the checks
 * mirror its utility code, which a DL provider cannot link).  What passes
 * is then narrowed to what the hints asked: the sizes the application
 * wants, the modes it supports, FI_MR_LOCAL only if it offered it.
 */
#include <string.h>

#include "ofi.h"

/* Rx-only capabilities a tx_attr may carry (and the other way round). */
#define IGNORED_TX_CAPS (FI_REMOTE_READ | FI_REMOTE_WRITE | FI_RECV | \
			 FI_DIRECTED_RECV | FI_VARIABLE_MSG | FI_MULTI_RECV | \
			 FI_SOURCE | FI_RMA_EVENT | FI_SOURCE_ERR)
#define IGNORED_RX_CAPS (FI_READ | FI_WRITE | FI_SEND | FI_FENCE | \
			 FI_MULTICAST | FI_NAMED_RX_CTX)
/* Memory-registration modes that matter only to an RMA target. */
#define MR_RMA_TARGET (FI_MR_RAW | FI_MR_VIRT_ADDR | FI_MR_PROV_KEY | \
		       FI_MR_RMA_EVENT)

#define NO(what) do { \
	FI_INFO(&xrf_prov, FI_LOG_CORE, "hints: %s\n", what); \
	return -FI_ENODATA; \
} while (0)

static int progress_level(enum fi_progress p)
{
	return p == FI_PROGRESS_AUTO ? 1 : p == FI_PROGRESS_MANUAL ? 2 : 3;
}

/* The modes a target-side application must accept, for its caps. */
static uint64_t mr_mode_for(uint64_t caps, uint64_t mode)
{
	if (!(caps & (FI_RMA | FI_ATOMIC)))
		return mode & FI_MR_LOCAL;
	if (!(caps & (FI_REMOTE_READ | FI_REMOTE_WRITE)) &&
	    (caps & (FI_READ | FI_WRITE)))
		return mode & ~(uint64_t)MR_RMA_TARGET;
	return mode;
}

/* As libfabric 1.17 decides: FI_MR_BASIC / FI_MR_SCALABLE alone for old
 * callers, else every mode the provider needs for the caps asked
 * (FI_MR_UNSPEC: the caller takes what the provider says). */
static int check_mr_mode(uint32_t version, const struct fi_info *prov,
			 const struct fi_info *hints)
{
	uint64_t user = (uint64_t)hints->domain_attr->mr_mode;
	uint64_t need = (uint64_t)prov->domain_attr->mr_mode & ~(uint64_t)FI_MR_LOCAL;

	if (FI_VERSION_LT(version, FI_VERSION(1, 5)) || (user & FI_MR_BASIC)) {
		if (user == FI_MR_UNSPEC || user == FI_MR_BASIC)
			return 0;
		NO("mr_mode: only FI_MR_BASIC for this API version");
	}
	if (user & FI_MR_SCALABLE)
		NO("mr_mode: FI_MR_SCALABLE (keys are the provider's)");
	need = mr_mode_for(hints->caps ? hints->caps : prov->caps, need);
	if (user != FI_MR_UNSPEC && (user & need) != need)
		NO("mr_mode: FI_MR_VIRT_ADDR, FI_MR_PROV_KEY and FI_MR_ALLOCATED are required");
	return 0;
}

static int check_domain(uint32_t version, const struct fi_info *prov,
			const struct fi_info *hints)
{
	const struct fi_domain_attr *p = prov->domain_attr, *u = hints->domain_attr;

	if (!u)
		return 0;
	if (u->name && strcmp(u->name, p->name) != 0)
		NO("domain name");
	if (progress_level(u->control_progress) < progress_level(p->control_progress) ||
	    progress_level(u->data_progress) < progress_level(p->data_progress))
		NO("progress model");
	if (u->cq_data_size > p->cq_data_size)
		NO("cq_data_size (4 bytes: xroce immediate data)");
	if (u->max_ep_stx_ctx > p->max_ep_stx_ctx || u->max_ep_srx_ctx > p->max_ep_srx_ctx)
		NO("shared contexts");
	if (check_mr_mode(version, prov, hints))
		return -FI_ENODATA;
	if (FI_VERSION_LT(version, FI_VERSION(1, 5)))
		return 0;
	if (u->cntr_cnt > p->cntr_cnt)
		NO("counters");
	if (u->mr_iov_limit > p->mr_iov_limit)
		NO("mr_iov_limit");
	if (u->caps & ~p->caps)
		NO("domain caps");
	if ((u->mode & p->mode) != p->mode)
		NO("domain mode");
	if (u->max_err_data > p->max_err_data)
		NO("max_err_data");
	if (u->mr_cnt > p->mr_cnt)
		NO("mr_cnt");
	if (u->auth_key_size)
		NO("authentication keys");
	return 0;
}

static int check_ep(const struct fi_info *prov, const struct fi_info *hints)
{
	const struct fi_ep_attr *p = prov->ep_attr, *u = hints->ep_attr;

	if (!u)
		return 0;
	if (u->type != FI_EP_UNSPEC && u->type != p->type)
		NO("endpoint type (FI_EP_MSG only; FI_EP_RDM comes from ofi_rxm)");
	if (u->protocol != FI_PROTO_UNSPEC && u->protocol != p->protocol)
		NO("protocol");
	if (u->protocol_version > p->protocol_version)
		NO("protocol version");
	if (u->max_msg_size > p->max_msg_size)
		NO("max_msg_size");
	if (u->tx_ctx_cnt > 1 || u->rx_ctx_cnt > 1)
		NO("shared or scalable contexts");
	if ((hints->caps & FI_RMA) &&
	    (u->max_order_raw_size > p->max_order_raw_size ||
	     u->max_order_war_size > p->max_order_war_size ||
	     u->max_order_waw_size > p->max_order_waw_size))
		NO("RMA ordering");
	if (u->auth_key_size)
		NO("authentication keys");
	return 0;
}

/* Modes the provider needs for the caps asked (caps 0: all of ours). */
static uint64_t mode_needed(const struct fi_info *prov, const struct fi_info *hints)
{
	uint64_t caps = hints && hints->caps ? hints->caps : prov->caps;

	/* A WRITE with remote CQ data consumes a posted receive. */
	return (caps & (FI_RMA | FI_REMOTE_WRITE)) ? FI_RX_CQ_DATA : 0;
}

static int check_tx(const struct fi_info *prov, const struct fi_info *hints,
		    uint64_t need)
{
	const struct fi_tx_attr *p = prov->tx_attr, *u = hints->tx_attr;
	uint64_t mode;

	if (!u)
		return 0;
	if ((u->caps & ~(uint64_t)IGNORED_TX_CAPS) & ~p->caps)
		NO("tx caps");
	mode = u->mode ? u->mode : hints->mode;
	if ((mode & need) != need)
		NO("tx mode");
	if (u->op_flags & ~p->op_flags)
		NO("tx op_flags");
	if (u->msg_order & ~p->msg_order)
		NO("tx msg_order (FI_ORDER_SAS only)");
	if (u->comp_order & ~p->comp_order)
		NO("tx comp_order");
	if (u->inject_size > p->inject_size || u->size > p->size ||
	    u->iov_limit > p->iov_limit || u->rma_iov_limit > p->rma_iov_limit)
		NO("tx sizes");
	return 0;
}

static int check_rx(const struct fi_info *prov, const struct fi_info *hints,
		    uint64_t need)
{
	const struct fi_rx_attr *p = prov->rx_attr, *u = hints->rx_attr;
	uint64_t mode;

	if (!u)
		return 0;
	if ((u->caps & ~(uint64_t)IGNORED_RX_CAPS) & ~p->caps)
		NO("rx caps");
	mode = u->mode ? u->mode : hints->mode;
	if ((mode & need) != need)
		NO("rx mode");
	if (u->op_flags & ~p->op_flags)
		NO("rx op_flags");
	if (u->msg_order & ~p->msg_order)
		NO("rx msg_order (FI_ORDER_SAS only)");
	if (u->comp_order & ~p->comp_order)
		NO("rx comp_order");
	if (u->total_buffered_recv > p->total_buffered_recv || u->size > p->size ||
	    u->iov_limit > p->iov_limit)
		NO("rx sizes");
	return 0;
}

/* "xroce", or a list naming it ("xroce;^ofi_rxm" from a layering
 * provider: '^' entries exclude others). */
static bool names_us(const char *list)
{
	size_t n = strlen(XRF_NAME);
	bool positive = false;

	while (*list) {
		size_t k = strcspn(list, ";");

		if (list[0] != '^') {
			if (k == n && !strncasecmp(list, XRF_NAME, n))
				return true;
			positive = true;
		}
		list += k + (list[k] == ';');
	}
	return !positive;
}

static int check_fabric(const struct fi_info *prov, const struct fi_info *hints)
{
	const struct fi_fabric_attr *u = hints->fabric_attr;

	if (!u)
		return 0;
	if (u->name && strcmp(u->name, prov->fabric_attr->name) != 0)
		NO("fabric name");
	if (u->prov_name && !names_us(u->prov_name))
		NO("provider name");
	if (u->prov_version && u->prov_version > XRF_PROV_VERSION)
		NO("provider version");
	return 0;
}

int xrf_check_hints(uint32_t version, const struct fi_info *prov,
		    const struct fi_info *hints)
{
	uint64_t need;

	if (!hints)
		return 0;
	if (hints->caps & ~prov->caps)
		NO("caps (FI_MSG, FI_RMA, FI_REMOTE_COMM: no tagged, atomic, "
		   "multicast, collective, FI_SOURCE)");
	need = mode_needed(prov, hints);
	if ((hints->mode & need) != need)
		NO("mode: FI_RX_CQ_DATA is required with FI_RMA");
	if (hints->addr_format != FI_FORMAT_UNSPEC &&
	    hints->addr_format != FI_SOCKADDR &&
	    hints->addr_format != prov->addr_format)
		NO("address format");
	if (check_ep(prov, hints) || check_domain(version, prov, hints) ||
	    check_tx(prov, hints, need) || check_rx(prov, hints, need) ||
	    check_fabric(prov, hints))
		return -FI_ENODATA;
	return 0;
}

static void alter_attrs(struct fi_info *prov, const struct fi_info *hints)
{
	if (hints->tx_attr) {
		if (hints->tx_attr->size)
			prov->tx_attr->size = hints->tx_attr->size;
		prov->tx_attr->op_flags = hints->tx_attr->op_flags;
		if (hints->tx_attr->inject_size)
			prov->tx_attr->inject_size = hints->tx_attr->inject_size;
	}
	if (hints->rx_attr) {
		if (hints->rx_attr->size)
			prov->rx_attr->size = hints->rx_attr->size;
		prov->rx_attr->op_flags = hints->rx_attr->op_flags;
	}
	if (hints->domain_attr) {
		if (hints->domain_attr->threading)
			prov->domain_attr->threading = hints->domain_attr->threading;
		if (hints->domain_attr->resource_mgmt == FI_RM_DISABLED)
			prov->domain_attr->resource_mgmt = FI_RM_DISABLED;
	}
}

void xrf_alter_info(uint32_t version, struct fi_info *prov,
		    const struct fi_info *hints)
{
	uint64_t primary = FI_MSG | FI_RMA | FI_SEND | FI_RECV | FI_READ |
			   FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
	uint64_t mr;

	prov->mode = mode_needed(prov, hints);
	prov->tx_attr->mode = prov->rx_attr->mode = prov->mode;
	if (!hints)
		return;
	if (hints->caps & primary) {
		prov->caps = (hints->caps & primary) | (prov->caps & ~primary);
		prov->tx_attr->caps &= prov->caps;
		prov->rx_attr->caps &= prov->caps;
	}
	alter_attrs(prov, hints);
	mr = (uint64_t)prov->domain_attr->mr_mode & ~(uint64_t)FI_MR_LOCAL;
	if (FI_VERSION_LT(version, FI_VERSION(1, 5))) {
		prov->domain_attr->mr_mode = FI_MR_BASIC;
		return;
	}
	/* With FI_MR_LOCAL offered, local buffers come registered: used in
	 * place once libxroce registers any memory.  Without it, they are
	 * copied through bounce buffers. */
	mr = mr_mode_for(prov->caps, mr);
	if (hints->domain_attr && (hints->domain_attr->mr_mode & FI_MR_LOCAL))
		mr |= FI_MR_LOCAL;
	if (hints->mode & FI_LOCAL_MR)
		mr |= FI_MR_LOCAL;
	prov->domain_attr->mr_mode = (int)mr;
}
