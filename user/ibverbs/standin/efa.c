// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libefa.so.1 stand-in for programs run on xroce (see mlx5.c): "this is
 * not an EFA device".  Versions as in rdma-core's libefa.map.
 */
#include <errno.h>
#include <infiniband/efadv.h>

#define EXPORT __attribute__((visibility("default")))

EXPORT struct ibv_qp *efadv_create_driver_qp(struct ibv_pd *pd,
					     struct ibv_qp_init_attr *attr,
					     uint32_t driver_qp_type)
{
	(void)pd; (void)attr; (void)driver_qp_type;
	errno = EOPNOTSUPP;
	return NULL;
}

EXPORT struct ibv_qp *efadv_create_qp_ex(struct ibv_context *ctx,
					 struct ibv_qp_init_attr_ex *attr,
					 struct efadv_qp_init_attr *efa_attr,
					 uint32_t inlen)
{
	(void)ctx; (void)attr; (void)efa_attr; (void)inlen;
	errno = EOPNOTSUPP;
	return NULL;
}

EXPORT int efadv_query_device(struct ibv_context *ctx,
			      struct efadv_device_attr *attr, uint32_t inlen)
{
	(void)ctx; (void)attr; (void)inlen;
	return EOPNOTSUPP;
}
