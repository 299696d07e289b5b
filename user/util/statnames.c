// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <string.h>

#include "statnames.h"
#include "contract/abi.h"

/* Indexed by the enum, so reordering abi.h cannot mismatch names.  A
 * counter added to the enum without a name here leaves a NULL hole, which
 * tests/unit/test_statnames.c catches; one added at the end trips the
 * static assert below. */
static const char *const stat_names[] = {
	[XR_STAT_RX_DATA] = "rx_data",
	[XR_STAT_RX_BYTES] = "rx_bytes",
	[XR_STAT_RX_DUP] = "rx_dup",
	[XR_STAT_RX_ACK] = "rx_ack",
	[XR_STAT_RX_NAK] = "rx_nak",
	[XR_STAT_TX_ACK] = "tx_ack",
	[XR_STAT_TX_NAK] = "tx_nak",
	[XR_STAT_MSG_DONE] = "msg_done",
	[XR_STAT_PROBE] = "probe",
	[XR_STAT_PASS] = "pass",
	[XR_STAT_DROP_TRUNC] = "drop_trunc",
	[XR_STAT_DROP_VERSION] = "drop_version",
	[XR_STAT_DROP_NO_CONN] = "drop_no_conn",
	[XR_STAT_DROP_CONN_STATE] = "drop_conn_state",
	[XR_STAT_DROP_TOKEN] = "drop_token",
	[XR_STAT_DROP_PEER] = "drop_peer",
	[XR_STAT_DROP_CSUM] = "drop_csum",
	[XR_STAT_DROP_KEY] = "drop_key",
	[XR_STAT_DROP_BOUNDS] = "drop_bounds",
	[XR_STAT_DROP_ACCESS] = "drop_access",
	[XR_STAT_DROP_LENGTH] = "drop_length",
	[XR_STAT_DROP_OPCODE] = "drop_opcode",
	[XR_STAT_DROP_WINDOW] = "drop_window",
	[XR_STAT_DROP_EVQ_FULL] = "drop_evq_full",
	[XR_STAT_DROP_NO_MEM] = "drop_no_mem",
	[XR_STAT_DROP_ACK_LOST] = "drop_ack_lost",
	[XR_STAT_DROP_FRAG] = "drop_frag",
	[XR_STAT_TX_ACK_FAIL] = "tx_ack_fail",
	[XR_STAT_EVT_LOST] = "evt_lost",
	[XR_STAT_DROP_DEAD] = "drop_dead",
	[XR_STAT_NAK_RNR] = "nak_rnr",
	[XR_STAT_TX_BUILT] = "tx_built",
	[XR_STAT_DROP_TXR] = "drop_txr",
	[XR_STAT_RX_BIND] = "rx_bind",
	[XR_STAT_DROP_BIND] = "drop_bind",
	[XR_STAT_RX_CSUM_PARTIAL] = "rx_csum_partial",
};

_Static_assert(sizeof(stat_names) / sizeof(stat_names[0]) == XR_STAT_MAX,
	       "every enum xr_stat needs a name in stat_names");

static const char *const conn_state_names[] = {
	[XR_CONN_INIT] = "init",
	[XR_CONN_RTS] = "rts",
	[XR_CONN_ERROR] = "error",
	[XR_CONN_CLOSED] = "closed",
};

/* Indexed by bit number. */
static const char *const cfg_flag_names[] = {
	"verify_csum", /* XR_CFG_VERIFY_CSUM */
};

_Static_assert(XR_CFG_VERIFY_CSUM == 1u << 0, "cfg_flag_names order");

const char *xr_stat_name(unsigned int stat)
{
	return stat < XR_STAT_MAX ? stat_names[stat] : NULL;
}

int xr_stat_by_name(const char *name)
{
	unsigned int i;

	for (i = 0; i < XR_STAT_MAX; i++)
		if (stat_names[i] && !strcmp(stat_names[i], name))
			return (int)i;
	return -ENOENT;
}

const char *xr_conn_state_name(unsigned int state)
{
	if (state >= sizeof(conn_state_names) / sizeof(conn_state_names[0]))
		return NULL;
	return conn_state_names[state];
}

const char *xr_cfg_flag_name(unsigned int bit)
{
	if (bit >= sizeof(cfg_flag_names) / sizeof(cfg_flag_names[0]))
		return NULL;
	return cfg_flag_names[bit];
}
