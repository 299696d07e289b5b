// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Control-plane cryptography with libsodium: SipHash-x24 for cookies,
 * HMAC-SHA-512/256 for message authentication, keyed BLAKE2b to derive
 * connection keys, crypto_kdf (BLAKE2b) for the keys of header MACs.
 * Nothing here is home-made but the choice of inputs.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sodium.h>
#include <arpa/inet.h>
#include <endian.h>

#include "auth.h"
#include "contract/siphash.h"

#define XR_COOKIE_SLOT_NS 10000000000ull /* a cookie is good 10-20 s */

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* 32 raw bytes, or 64 hex digits (surrounding white space ignored). */
static int parse_key(const uint8_t *buf, size_t n, uint8_t key[XR_KEY_LEN])
{
	size_t i, k = 0;

	if (n == XR_KEY_LEN) {
		memcpy(key, buf, XR_KEY_LEN);
		return 0;
	}
	for (i = 0; i < n; i++) {
		int hi, lo;

		if (isspace(buf[i]))
			continue;
		if (k == XR_KEY_LEN || i + 1 >= n)
			return -EINVAL;
		hi = hexval(buf[i]);
		lo = hexval(buf[i + 1]);
		if (hi < 0 || lo < 0)
			return -EINVAL;
		key[k++] = (uint8_t)(hi << 4 | lo);
		i++;
	}
	return k == XR_KEY_LEN ? 0 : -EINVAL;
}

static int load_key(struct xr_auth *a, const struct xr_logger *lg,
		    const char *path)
{
	uint8_t buf[160];
	size_t n;
	FILE *f = fopen(path, "rb");

	if (!f)
		return xr_fail(lg, -errno, "key file %s: %s", path, strerror(errno));
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	if (parse_key(buf, n, a->key)) {
		sodium_memzero(buf, sizeof(buf));
		return xr_fail(lg, -EINVAL, "key file %s: expected 32 bytes, raw "
			       "or as 64 hexadecimal digits", path);
	}
	sodium_memzero(buf, sizeof(buf));
	a->keyed = true;
	return 0;
}

int xr_auth_init(struct xr_auth *a, const struct xr_logger *lg,
		 const char *key_file)
{
	const char *path = key_file ? key_file : getenv("XROCE_KEY_FILE");

	memset(a, 0, sizeof(*a));
	if (sodium_init() < 0)
		return xr_fail(lg, -EIO, "libsodium cannot initialise");
	randombytes_buf(a->cookie_key, sizeof(a->cookie_key));
	if (path && *path)
		return load_key(a, lg, path);
	return 0;
}

void xr_auth_fini(struct xr_auth *a)
{
	sodium_memzero(a, sizeof(*a));
}

uint64_t xr_auth_cookie_slot(uint64_t now_ns)
{
	return now_ns / XR_COOKIE_SLOT_NS;
}

void xr_auth_cookie(const struct xr_auth *a, const struct sockaddr_in6 *from,
		    uint64_t nonce, uint64_t slot, uint8_t out[XR_CTRL_COOKIE_LEN])
{
	uint8_t in[16 + 2 + 8 + 8];

	/* Byte orders fixed (network), so that any host computes the same. */
	nonce = htobe64(nonce);
	slot = htobe64(slot);
	memcpy(in, &from->sin6_addr, 16);
	memcpy(in + 16, &from->sin6_port, 2);
	memcpy(in + 18, &nonce, 8);
	memcpy(in + 26, &slot, 8);
	crypto_shorthash_siphashx24(out, in, sizeof(in), a->cookie_key);
}

bool xr_auth_cookie_ok(const struct xr_auth *a, const struct sockaddr_in6 *from,
		       uint64_t nonce, const uint8_t cookie[XR_CTRL_COOKIE_LEN],
		       uint64_t now_ns)
{
	uint64_t slot = xr_auth_cookie_slot(now_ns);
	uint8_t want[XR_CTRL_COOKIE_LEN];
	int k;

	for (k = 0; k < 2; k++) {
		xr_auth_cookie(a, from, nonce, slot - (uint64_t)k, want);
		if (!sodium_memcmp(want, cookie, sizeof(want)))
			return true;
	}
	return false;
}

/* HMAC of everything before the mac field. */
static void ctrl_mac(const uint8_t key[XR_KEY_LEN], const struct xr_ctrl_msg *m,
		     uint8_t out[XR_CTRL_MAC_LEN])
{
	crypto_auth_hmacsha512256(out, (const unsigned char *)m,
				  __builtin_offsetof(struct xr_ctrl_msg, mac), key);
}

void xr_auth_sign(const uint8_t key[XR_KEY_LEN], struct xr_ctrl_msg *m)
{
	m->flags |= htonl(XR_CF_AUTH);
	ctrl_mac(key, m, m->mac);
}

bool xr_auth_check(const uint8_t key[XR_KEY_LEN], const struct xr_ctrl_msg *m)
{
	uint8_t want[XR_CTRL_MAC_LEN];

	if (!(ntohl(m->flags) & XR_CF_AUTH))
		return false;
	ctrl_mac(key, m, want);
	return !sodium_memcmp(want, m->mac, sizeof(want));
}

void xr_auth_conn_key(const struct xr_auth *a, uint64_t client_nonce,
		      uint64_t server_nonce, uint32_t client_conn,
		      uint32_t server_conn, uint8_t out[XR_KEY_LEN])
{
	static const char label[] = "xroce connection key v1";
	crypto_generichash_state st;

	client_nonce = htobe64(client_nonce);
	server_nonce = htobe64(server_nonce);
	client_conn = htonl(client_conn);
	server_conn = htonl(server_conn);
	crypto_generichash_init(&st, a->key, sizeof(a->key), XR_KEY_LEN);
	crypto_generichash_update(&st, (const unsigned char *)label, sizeof(label));
	crypto_generichash_update(&st, (const unsigned char *)&client_nonce, 8);
	crypto_generichash_update(&st, (const unsigned char *)&server_nonce, 8);
	crypto_generichash_update(&st, (const unsigned char *)&client_conn, 4);
	crypto_generichash_update(&st, (const unsigned char *)&server_conn, 4);
	crypto_generichash_final(&st, out, XR_KEY_LEN);
}

void xr_auth_mac_key(const uint8_t conn_key[XR_KEY_LEN], uint32_t epoch,
		     int owner, int kind, __u64 out[2])
{
	uint8_t k[XR_MAC_KEY_LEN];
	uint64_t id = (uint64_t)epoch << 2 | (uint64_t)(owner & 1) << 1 |
		      (uint64_t)(kind & 1);

	_Static_assert(sizeof(XR_MAC_CTX) - 1 == crypto_kdf_CONTEXTBYTES,
		       "crypto_kdf context length");
	_Static_assert(XR_KEY_LEN == crypto_kdf_KEYBYTES, "connection key length");
	crypto_kdf_derive_from_key(k, sizeof(k), id, XR_MAC_CTX, conn_key);
	out[0] = xr_le64_load(k);
	out[1] = xr_le64_load(k + 8);
	sodium_memzero(k, sizeof(k));
}
