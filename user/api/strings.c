// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Printable names of public enums. */
#include "xroce/xroce.h"

const char *xroce_wc_status_str(enum xroce_wc_status status)
{
	switch (status) {
	case XROCE_WC_SUCCESS: return "success";
	case XROCE_WC_LOC_LEN_ERR: return "local length error";
	case XROCE_WC_LOC_PROT_ERR: return "local protection error";
	case XROCE_WC_WR_FLUSH_ERR: return "work request flushed";
	case XROCE_WC_REM_ACCESS_ERR: return "remote access error";
	case XROCE_WC_REM_INV_REQ_ERR: return "remote invalid request";
	case XROCE_WC_RETRY_EXC_ERR: return "transport retry counter exceeded";
	case XROCE_WC_RNR_RETRY_EXC_ERR: return "receiver-not-ready retries exceeded";
	case XROCE_WC_GENERAL_ERR: return "general error";
	}
	return "unknown status";
}
