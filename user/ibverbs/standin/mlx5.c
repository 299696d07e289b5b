// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libmlx5.so.1 stand-in for programs run on xroce.  Debian's perftest links
 * libmlx5 (mlx5dv_*) and is loaded with BIND_NOW, so every symbol it names
 * must resolve; Debian's libmlx5 in turn needs libibverbs' private provider
 * interface, which xroce's libibverbs does not have.  These functions say,
 * truthfully, "this is not an mlx5 device": false, NULL with EOPNOTSUPP, or
 * EOPNOTSUPP.  Versions as in rdma-core's libmlx5.map.
 */
#include <errno.h>
#include <stdbool.h>
#include <infiniband/mlx5dv.h>

#define EXPORT __attribute__((visibility("default")))

EXPORT bool mlx5dv_is_supported(struct ibv_device *device)
{
	(void)device;
	return false;
}

EXPORT int mlx5dv_query_device(struct ibv_context *ctx, struct mlx5dv_context *out)
{
	(void)ctx; (void)out;
	return EOPNOTSUPP;
}

EXPORT struct ibv_context *mlx5dv_open_device(struct ibv_device *device,
					      struct mlx5dv_context_attr *attr)
{
	(void)device; (void)attr;
	errno = EOPNOTSUPP;
	return NULL;
}

EXPORT struct ibv_qp *mlx5dv_create_qp(struct ibv_context *context,
				       struct ibv_qp_init_attr_ex *qp_attr,
				       struct mlx5dv_qp_init_attr *mlx5_qp_attr)
{
	(void)context; (void)qp_attr; (void)mlx5_qp_attr;
	errno = EOPNOTSUPP;
	return NULL;
}

EXPORT int mlx5dv_devx_general_cmd(struct ibv_context *context, const void *in,
				   size_t inlen, void *out, size_t outlen)
{
	(void)context; (void)in; (void)inlen; (void)out; (void)outlen;
	errno = EOPNOTSUPP;
	return EOPNOTSUPP;
}

EXPORT struct mlx5dv_mkey *mlx5dv_create_mkey(struct mlx5dv_mkey_init_attr *attr)
{
	(void)attr;
	errno = EOPNOTSUPP;
	return NULL;
}

EXPORT int mlx5dv_destroy_mkey(struct mlx5dv_mkey *mkey)
{
	(void)mkey;
	return EOPNOTSUPP;
}

EXPORT struct mlx5dv_qp_ex *mlx5dv_qp_ex_from_ibv_qp_ex(struct ibv_qp_ex *qp)
{
	(void)qp;
	errno = EOPNOTSUPP;
	return NULL;
}

EXPORT int mlx5dv_crypto_login(struct ibv_context *context,
			       struct mlx5dv_crypto_login_attr *attr)
{
	(void)context; (void)attr;
	return EOPNOTSUPP;
}

EXPORT struct mlx5dv_dek *mlx5dv_dek_create(struct ibv_context *context,
					    struct mlx5dv_dek_init_attr *attr)
{
	(void)context; (void)attr;
	errno = EOPNOTSUPP;
	return NULL;
}

EXPORT int mlx5dv_dek_destroy(struct mlx5dv_dek *dek)
{
	(void)dek;
	return EOPNOTSUPP;
}
