// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ofi_hints: fi_getinfo against the xroce provider (run where an interface
 * carries xroce, with FI_PROVIDER_PATH pointing at libxroce-fi.so).
 *
 *  - the hints aws-ofi-nccl's sendrecv protocol asks with (FI_VERSION
 *    1.6, as it falls back to on libfabric 1.17; no GPU: no FI_HMEM):
 *    FI_EP_RDM, FI_TAGGED | FI_MSG | FI_LOCAL_COMM | FI_REMOTE_COMM,
 *    FI_MR_LOCAL | FI_MR_ENDPOINT | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
 *    FI_MR_PROV_KEY, FI_CONTEXT | FI_CONTEXT2, FI_THREAD_SAFE, FI_ORDER_SAS:
 *    answered by "xroce;ofi_rxm", whose attributes are checked; with
 *    FI_HMEM (its GPU-direct variant) the answer is -FI_ENODATA;
 *  - the hints Open MPI's mtl ofi asks with (FI_DIRECTED_RECV, remote CQ
 *    data of 4 bytes): answered by "xroce;ofi_rxm";
 *  - the provider alone: what it offers (FI_EP_MSG, domain xroce_IF,
 *    fabric = the interface's network, the interface's address), and
 *    -FI_ENODATA for each thing it cannot do.
 */
#include <arpa/inet.h>

#include "ofi_common.h"

#include <rdma/fi_tagged.h>

static struct fi_info *nccl_hints(int gdr)
{
	struct fi_info *h = fi_allocinfo();

	if (!h)
		return NULL;
	h->caps = FI_LOCAL_COMM | FI_REMOTE_COMM | FI_TAGGED | FI_MSG;
	h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_ENDPOINT;
	h->domain_attr->mr_key_size = 2;
	if (gdr) {
		h->caps |= FI_HMEM | FI_RMA | FI_READ;
		h->domain_attr->mr_mode |= FI_MR_HMEM;
	}
	h->mode = FI_CONTEXT | FI_CONTEXT2;
	h->ep_attr->type = FI_EP_RDM;
	h->domain_attr->threading = FI_THREAD_SAFE;
	h->domain_attr->control_progress = FI_PROGRESS_UNSPEC;
	h->domain_attr->data_progress = FI_PROGRESS_UNSPEC;
	h->domain_attr->mr_mode |= FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	h->tx_attr->msg_order = FI_ORDER_SAS;
	h->rx_attr->msg_order = FI_ORDER_SAS;
	return h;
}

static struct fi_info *mtl_hints(void)
{
	struct fi_info *h = fi_allocinfo();

	if (!h)
		return NULL;
	h->mode = FI_CONTEXT | FI_CONTEXT2;
	h->ep_attr->type = FI_EP_RDM;
	h->caps = FI_TAGGED | FI_LOCAL_COMM | FI_REMOTE_COMM | FI_DIRECTED_RECV;
	h->tx_attr->msg_order = FI_ORDER_SAS;
	h->rx_attr->msg_order = FI_ORDER_SAS;
	h->rx_attr->op_flags = FI_COMPLETION;
	h->tx_attr->op_flags = FI_COMPLETION;
	h->domain_attr->threading = FI_THREAD_DOMAIN;
	h->domain_attr->cq_data_size = 4;
	h->domain_attr->av_type = FI_AV_MAP;
	h->domain_attr->resource_mgmt = FI_RM_ENABLED;
	return h;
}

/* An "xroce;ofi_rxm" RDM info is among the answers to hints. */
static int rdm_answer(uint32_t version, struct fi_info *hints, const char *who)
{
	struct fi_info *info, *fi;
	int rc = fi_getinfo(version, NULL, NULL, 0, hints, &info);

	EXPECT(rc, 0, who);
	CHECK(info, "%s: no answer", who);
	for (fi = info; fi; fi = fi->next)
		if (!strcmp(fi->fabric_attr->prov_name, "xroce;ofi_rxm"))
			break;
	CHECK(fi, "%s: no xroce;ofi_rxm answer (first: %s)", who,
	      info->fabric_attr->prov_name);
	CHECK(fi->ep_attr->type == FI_EP_RDM && (fi->caps & FI_TAGGED) &&
	      (fi->caps & FI_MSG || !(hints->caps & FI_MSG)), "%s: caps", who);
	CHECK(!strncmp(fi->domain_attr->name, "xroce_", 6), "%s: domain %s", who,
	      fi->domain_attr->name);
	CHECK((fi->domain_attr->mr_mode & (FI_MR_LOCAL | FI_MR_VIRT_ADDR |
					   FI_MR_ALLOCATED | FI_MR_PROV_KEY)) ==
	      (FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY) ||
	      !(hints->domain_attr->mr_mode & FI_MR_LOCAL), "%s: mr_mode %#x", who,
	      fi->domain_attr->mr_mode);
	CHECK(fi->domain_attr->cq_data_size >= hints->domain_attr->cq_data_size,
	      "%s: cq_data_size", who);
	CHECK(fi->tx_attr->msg_order & FI_ORDER_SAS, "%s: FI_ORDER_SAS", who);
	printf("  ok   %s: %s, domain %s, fabric %s\n", who, fi->fabric_attr->prov_name,
	       fi->domain_attr->name, fi->fabric_attr->name);
	fi_freeinfo(info);
	return 0;
}

/* What the provider alone offers. */
static int offers(void)
{
	struct fi_info *h = xr_hints(), *info, *fi;
	char host[INET6_ADDRSTRLEN];
	int n = 0;

	CHECK(h, "fi_allocinfo");
	h->addr_format = FI_FORMAT_UNSPEC;
	EXPECT(fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &info), 0, "fi_getinfo(xroce)");
	for (fi = info; fi; fi = fi->next, n++) {
		struct sockaddr_in *sa = fi->src_addr;

		CHECK(!strcmp(fi->fabric_attr->prov_name, "xroce"), "prov_name %s",
		      fi->fabric_attr->prov_name);
		CHECK(fi->ep_attr->type == FI_EP_MSG, "type");
		CHECK(!strncmp(fi->domain_attr->name, "xroce_", 6), "domain name %s",
		      fi->domain_attr->name);
		CHECK(strchr(fi->fabric_attr->name, '/'), "fabric name %s",
		      fi->fabric_attr->name);
		CHECK(fi->mode & FI_RX_CQ_DATA, "FI_RX_CQ_DATA with FI_RMA");
		CHECK(fi->domain_attr->cq_data_size == 4, "cq_data_size");
		if (fi->addr_format == FI_SOCKADDR_IN) {
			CHECK(fi->src_addr && sa->sin_family == AF_INET && sa->sin_addr.s_addr,
			      "source address");
			inet_ntop(AF_INET, &sa->sin_addr, host, sizeof(host));
			printf("  ok   %s on %s: fabric %s, address %s\n",
			       fi->fabric_attr->prov_name, fi->domain_attr->name,
			       fi->fabric_attr->name, host);
		}
	}
	fi_freeinfo(info);
	fi_freeinfo(h);
	CHECK(n, "no answers");
	return 0;
}

/* hints changed by edit must be refused by the provider (-FI_ENODATA):
 * libfabric may still answer through a utility provider layered on it
 * ("xroce;ofi_rxm" for FI_EP_RDM), never with "xroce" itself. */
static int refused(const char *what, void (*edit)(struct fi_info *))
{
	struct fi_info *h = xr_hints(), *info = NULL, *fi;
	int rc;

	CHECK(h, "fi_allocinfo");
	edit(h);
	rc = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &info);
	for (fi = rc ? NULL : info; fi; fi = fi->next)
		CHECK(strcmp(fi->fabric_attr->prov_name, "xroce"),
		      "%s: the provider answered", what);
	fi_freeinfo(h);
	CHECK(rc == -FI_ENODATA || (!rc && info), "%s: fi_getinfo returned %d", what, rc);
	printf("  ok   -FI_ENODATA from xroce: %s%s\n", what,
	       rc ? "" : " (answered by a layered provider)");
	fi_freeinfo(info);
	return 0;
}

static void e_tagged(struct fi_info *h) { h->caps |= FI_TAGGED; }
static void e_atomic(struct fi_info *h) { h->caps |= FI_ATOMIC; }
static void e_rdm(struct fi_info *h) { h->ep_attr->type = FI_EP_RDM; }
static void e_dgram(struct fi_info *h) { h->ep_attr->type = FI_EP_DGRAM; }
static void e_scalable(struct fi_info *h) { h->domain_attr->mr_mode = FI_MR_SCALABLE; }
static void e_no_virt(struct fi_info *h) { h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_PROV_KEY | FI_MR_ALLOCATED; }
static void e_raw(struct fi_info *h) { h->tx_attr->msg_order = FI_ORDER_SAS | FI_ORDER_RAW; }
static void e_cqdata(struct fi_info *h) { h->domain_attr->cq_data_size = 8; }
static void e_txsize(struct fi_info *h) { h->tx_attr->size = 1u << 20; }
static void e_rxsize(struct fi_info *h) { h->rx_attr->size = 100000; }
static void e_inject(struct fi_info *h) { h->tx_attr->inject_size = 1u << 20; }
static void e_domain(struct fi_info *h) { h->domain_attr->name = strdup("xroce_nosuchif"); }
static void e_mode(struct fi_info *h) { h->mode = FI_CONTEXT; }
static void e_srx(struct fi_info *h) { h->ep_attr->rx_ctx_cnt = FI_SHARED_CONTEXT; }
static void e_cntr(struct fi_info *h) { h->domain_attr->cntr_cnt = 1; }
static void e_hmem(struct fi_info *h) { h->caps |= FI_HMEM; }
static void e_source(struct fi_info *h) { h->caps |= FI_SOURCE; }
static void e_fabric(struct fi_info *h) { h->fabric_attr->name = strdup("not-our-fabric"); }
static void e_addr(struct fi_info *h) { h->addr_format = FI_ADDR_PSMX2; }
static void e_fence(struct fi_info *h) { h->tx_attr->op_flags = FI_FENCE; }
static void e_multirecv(struct fi_info *h) { h->rx_attr->op_flags = FI_MULTI_RECV; }
static void e_msgsize(struct fi_info *h) { h->ep_attr->max_msg_size = (size_t)1 << 40; }

int main(void)
{
	static const struct { const char *what; void (*edit)(struct fi_info *); } no[] = {
		{ "FI_TAGGED (ofi_rxm's)", e_tagged }, { "FI_ATOMIC", e_atomic },
		{ "FI_EP_RDM (ofi_rxm's)", e_rdm }, { "FI_EP_DGRAM", e_dgram },
		{ "FI_MR_SCALABLE", e_scalable }, { "mr_mode without FI_MR_VIRT_ADDR", e_no_virt },
		{ "FI_ORDER_RAW", e_raw }, { "cq_data_size 8", e_cqdata },
		{ "tx size 1M", e_txsize }, { "rx size 100000", e_rxsize },
		{ "inject_size 1M", e_inject }, { "domain xroce_nosuchif", e_domain },
		{ "mode without FI_RX_CQ_DATA, with FI_RMA", e_mode },
		{ "shared receive context", e_srx }, { "counters", e_cntr },
		{ "FI_HMEM", e_hmem }, { "FI_SOURCE", e_source },
		{ "fabric name", e_fabric }, { "address format FI_ADDR_PSMX2", e_addr },
		{ "FI_FENCE", e_fence }, { "FI_MULTI_RECV", e_multirecv },
		{ "max_msg_size 2^40", e_msgsize },
	};
	struct fi_info *h;
	unsigned int i;
	int rc;

	prog = "ofi_hints";
	if (offers())
		return 1;
	for (i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		if (refused(no[i].what, no[i].edit))
			return 1;
	h = nccl_hints(0);
	if (rdm_answer(FI_VERSION(1, 6), h, "aws-ofi-nccl sendrecv hints"))
		return 1;
	fi_freeinfo(h);
	h = nccl_hints(1);
	{
		struct fi_info *info = NULL;

		h->fabric_attr->prov_name = strdup("xroce;ofi_rxm");
		rc = fi_getinfo(FI_VERSION(1, 6), NULL, NULL, 0, h, &info);
		fi_freeinfo(info);
		EXPECT(rc, -FI_ENODATA, "aws-ofi-nccl GPU-direct hints (FI_HMEM)");
		printf("  ok   -FI_ENODATA: aws-ofi-nccl GPU-direct hints (FI_HMEM)\n");
	}
	fi_freeinfo(h);
	h = mtl_hints();
	if (rdm_answer(FI_VERSION(1, 5), h, "Open MPI mtl ofi hints"))
		return 1;
	fi_freeinfo(h);
	printf("ofi_hints: passed\n");
	return 0;
}
