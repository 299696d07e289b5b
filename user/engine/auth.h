/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The control plane's cryptography, all of it libsodium's: stateless
 * cookies that a CONNECT must carry before it takes a slot, and, with a
 * cluster key, the authentication of control messages and the derivation
 * of each connection's keys from the key and both ends' nonces.
 */
#ifndef XR_ENGINE_AUTH_H
#define XR_ENGINE_AUTH_H

#include <stdbool.h>
#include <stdint.h>
#include <netinet/in.h>

#include "contract/wire.h"
#include "log.h"

#define XR_KEY_LEN 32

struct xr_auth {
	bool keyed;                        /* a cluster key is loaded */
	uint8_t key[XR_KEY_LEN];           /* the cluster key */
	uint8_t cookie_key[16];            /* this device's, random */
};

/* Load the cluster key from key_file (NULL: $XROCE_KEY_FILE; neither: no
 * key) and draw the cookie key.  The file holds 32 bytes, raw or as 64
 * hexadecimal digits. */
int xr_auth_init(struct xr_auth *a, const struct xr_logger *lg,
		 const char *key_file);
void xr_auth_fini(struct xr_auth *a);

/* The cookie for a CONNECT with nonce from `from`, in time slot `slot`. */
void xr_auth_cookie(const struct xr_auth *a, const struct sockaddr_in6 *from,
		    uint64_t nonce, uint64_t slot, uint8_t out[XR_CTRL_COOKIE_LEN]);
/* The cookie a CONNECT carries is this slot's or the previous one's. */
bool xr_auth_cookie_ok(const struct xr_auth *a, const struct sockaddr_in6 *from,
		       uint64_t nonce, const uint8_t cookie[XR_CTRL_COOKIE_LEN],
		       uint64_t now_ns);
uint64_t xr_auth_cookie_slot(uint64_t now_ns);

/* Sign m (XR_CF_AUTH, mac) with key, or check its signature. */
void xr_auth_sign(const uint8_t key[XR_KEY_LEN], struct xr_ctrl_msg *m);
bool xr_auth_check(const uint8_t key[XR_KEY_LEN], const struct xr_ctrl_msg *m);

/* A connection's key: the cluster key over both nonces and both ids
 * (client first), so neither end alone chooses it. */
void xr_auth_conn_key(const struct xr_auth *a, uint64_t client_nonce,
		      uint64_t server_nonce, uint32_t client_conn,
		      uint32_t server_conn, uint8_t out[XR_KEY_LEN]);

/* One of a keyed connection's header-MAC keys (wire.h, "Keyed
 * connections"): for key epoch `epoch` of the packet stream of `owner`
 * (0 the connecting side, 1 the listener), `kind` 0 for its DATA and
 * PROBEs, 1 for the answers to them; from the connection key with
 * libsodium's crypto_kdf.  Returned as SipHash key words. */
void xr_auth_mac_key(const uint8_t conn_key[XR_KEY_LEN], uint32_t epoch,
		     int owner, int kind, __u64 out[2]);

#endif /* XR_ENGINE_AUTH_H */
