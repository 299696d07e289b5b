-- SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
--
-- xroce.lua: Wireshark / tshark dissector for the xroce transport.
--
-- The wire format is include/contract/wire.h (docs/PROTOCOL.md explains it);
-- this file mirrors its sizes and offsets.  Every multi-byte field is
-- big-endian.  One xroce header per UDP datagram:
--
--   DATA         64-byte header + payload      data port (default 4793)
--   ACK / NAK    80 bytes                      data port -> sender's port
--   PROBE/REPLY  32 bytes                      data port
--   CTRL         256 bytes                     control port (default 4794)
--
-- Use:
--   wireshark -X lua_script:docs/xroce.lua capture.pcap
--   tshark    -X lua_script:docs/xroce.lua -r capture.pcap -Y xroce
-- or copy the file into ~/.local/lib/wireshark/plugins/.
--
-- Preferences (Edit > Preferences > Protocols > xroce, or tshark -o):
--   xroce.data_port   UDP port of the data plane        (4793)
--   xroce.ctrl_port   UDP port of the control sockets   (4794)
--   xroce.heuristic   also recognise xroce on other UDP ports (TRUE)
-- The heuristic is what decodes ACKs when the data port is not the
-- registered one: an ACK goes from the receiver's data port to the
-- ephemeral (entropy) source port the data came from.
--
-- Filter fields: xroce.type, xroce.path, xroce.dst_conn, xroce.token,
-- xroce.data.* (psn, csn, raddr, msg_off, payload_len, ...), xroce.ack.*
-- (cack, sack.psn = every PSN the SACK bitmap says arrived, sack.count,
-- sack.list, ...), xroce.probe.*, xroce.ctrl.* (op, src_conn, addr4,
-- addr6, priv, ...).  Malformed or truncated packets carry expert info
-- (filter: xroce.expert.*, or _ws.expert).

local xr = Proto("xroce", "xroce transport")

-- Constants from include/contract/wire.h -------------------------------------
local XR_VERSION = 1
local T_DATA, T_ACK, T_NAK, T_CTRL, T_PROBE, T_PROBE_REPLY = 1, 2, 3, 4, 5, 6
local DATA_LEN, ACK_LEN, PROBE_LEN, CTRL_LEN = 64, 80, 32, 256
local SACK_WORDS = 4
local CTRL_MAX_PLANES, CTRL_PRIV_MAX = 4, 60
local TWO32 = 4294967296

local TYPE_NAMES = {
	[T_DATA] = "DATA", [T_ACK] = "ACK", [T_NAK] = "NAK", [T_CTRL] = "CTRL",
	[T_PROBE] = "PROBE", [T_PROBE_REPLY] = "PROBE_REPLY",
}
local OPCODE_NAMES = {
	[1] = "WRITE", [2] = "WRITE_IMM", [3] = "SEND", [4] = "SEND_IMM",
	[5] = "READ_REQ", [6] = "READ_RESP",
}
local NAK_NAMES = {
	[0] = "NONE", [1] = "BAD_KEY", [2] = "BOUNDS", [3] = "ACCESS", [4] = "RNR",
	[5] = "BAD_OPCODE", [6] = "BAD_LENGTH",
}
local CTRL_NAMES = {
	[1] = "CONNECT", [2] = "ACCEPT", [3] = "REJECT", [4] = "CLOSE",
	[5] = "CLOSE_ACK", [6] = "COOKIE",
}
-- REJECT status: a positive Linux errno.
local ERRNO_NAMES = {
	[0] = "OK", [1] = "EPERM", [2] = "ENOENT", [11] = "EAGAIN",
	[12] = "ENOMEM", [13] = "EACCES", [16] = "EBUSY", [17] = "EEXIST",
	[22] = "EINVAL", [28] = "ENOSPC", [71] = "EPROTO", [90] = "EMSGSIZE",
	[93] = "EPROTONOSUPPORT", [95] = "EOPNOTSUPP", [98] = "EADDRINUSE",
	[99] = "EADDRNOTAVAIL", [104] = "ECONNRESET", [105] = "ENOBUFS",
	[110] = "ETIMEDOUT", [111] = "ECONNREFUSED", [113] = "EHOSTUNREACH",
}
local FAMILY_NAMES = { [4] = "IPv4", [6] = "IPv6" }

-- Fields -----------------------------------------------------------------
local F = {
	-- common to every type
	version = ProtoField.uint8("xroce.version", "Version", base.DEC, nil, 0xf0),
	type = ProtoField.uint8("xroce.type", "Type", base.DEC, TYPE_NAMES, 0x0f),
	path = ProtoField.uint8("xroce.path", "Path", base.DEC),
	dst_conn = ProtoField.uint32("xroce.dst_conn", "Destination connection", base.DEC),
	token = ProtoField.uint64("xroce.token", "Token", base.HEX),

	-- DATA
	d_flags = ProtoField.uint8("xroce.data.flags", "Flags", base.HEX),
	d_ar = ProtoField.bool("xroce.data.flags.ar", "Ack requested", 8, nil, 0x01),
	d_retx = ProtoField.bool("xroce.data.flags.retx", "Retransmission", 8, nil, 0x02),
	d_dup = ProtoField.bool("xroce.data.flags.dup", "Redundant copy", 8, nil, 0x08),
	d_last = ProtoField.bool("xroce.data.flags.last", "Last packet of message", 8, nil, 0x04),
	d_frsvd = ProtoField.uint8("xroce.data.flags.rsvd", "Reserved flags", base.HEX, nil, 0xf0),
	opcode = ProtoField.uint8("xroce.data.opcode", "Opcode", base.DEC, OPCODE_NAMES),
	psn = ProtoField.uint32("xroce.data.psn", "PSN", base.DEC),
	psn_base = ProtoField.uint32("xroce.data.psn_base", "PSN base", base.DEC),
	csn = ProtoField.uint32("xroce.data.csn", "CSN", base.DEC),
	ts = ProtoField.uint32("xroce.data.ts", "Timestamp (ns, low 32 bits)", base.DEC),
	raddr = ProtoField.uint64("xroce.data.raddr", "Remote address", base.HEX),
	rkey = ProtoField.uint32("xroce.data.rkey", "Remote key", base.HEX),
	msg_id = ProtoField.uint32("xroce.data.msg_id", "Message id", base.DEC),
	msg_len = ProtoField.uint32("xroce.data.msg_len", "Message length", base.DEC),
	msg_off = ProtoField.uint32("xroce.data.msg_off", "Message offset", base.DEC),
	imm = ProtoField.uint32("xroce.data.imm", "Immediate data", base.HEX),
	stream = ProtoField.uint16("xroce.data.stream", "Stream", base.DEC),
	ssn = ProtoField.uint16("xroce.data.ssn", "Stream sequence number", base.DEC),
	payload = ProtoField.bytes("xroce.data.payload", "Payload"),
	payload_len = ProtoField.uint32("xroce.data.payload_len", "Payload length", base.DEC),
	msg_end = ProtoField.uint32("xroce.data.msg_end", "End offset in message", base.DEC),

	-- ACK / NAK
	a_flags = ProtoField.uint8("xroce.ack.flags", "Flags", base.HEX),
	a_ece = ProtoField.bool("xroce.ack.flags.ece", "CE echo", 8, nil, 0x01),
	a_dup = ProtoField.bool("xroce.ack.flags.dup", "Duplicate", 8, nil, 0x02),
	a_oow = ProtoField.bool("xroce.ack.flags.oow", "Outside window", 8, nil, 0x04),
	a_epoch = ProtoField.bool("xroce.ack.flags.epoch", "Key epoch parity (keyed)", 8, nil, 0x08),
	a_knext = ProtoField.bool("xroce.ack.flags.knext", "Next epoch's keys held (keyed)", 8, nil, 0x10),
	a_sack = ProtoField.bool("xroce.ack.flags.sack", "SACK bits present", 8, nil, 0x20),
	a_frsvd = ProtoField.uint8("xroce.ack.flags.rsvd", "Reserved flags", base.HEX, nil, 0xc0),
	reason = ProtoField.uint8("xroce.ack.reason", "NAK reason", base.DEC, NAK_NAMES),
	cack = ProtoField.uint32("xroce.ack.cack", "Cumulative ACK (next PSN expected)", base.DEC),
	ack_psn = ProtoField.uint32("xroce.ack.ack_psn", "Acknowledged PSN", base.DEC),
	ts_echo = ProtoField.uint32("xroce.ack.ts_echo", "Timestamp echo", base.DEC),
	rate_hint = ProtoField.uint32("xroce.ack.rate_hint", "Rate hint (Mbit/s)", base.DEC),
	sack = ProtoField.bytes("xroce.ack.sack", "SACK bitmap"),
	sack_word = ProtoField.uint64("xroce.ack.sack.word", "SACK word", base.HEX),
	sack_psn = ProtoField.uint32("xroce.ack.sack.psn", "SACKed PSN", base.DEC),
	sack_count = ProtoField.uint32("xroce.ack.sack.count", "SACKed PSNs", base.DEC),
	sack_list = ProtoField.string("xroce.ack.sack.list", "SACKed PSN list"),
	ce_pkts = ProtoField.uint32("xroce.ack.ce_pkts", "CE-marked packets on path", base.DEC),
	rx_pkts = ProtoField.uint32("xroce.ack.rx_pkts", "Packets received on path", base.DEC),
	csn_cum = ProtoField.uint32("xroce.ack.csn_cum", "Next CSN expected", base.DEC),
	nak_csn = ProtoField.uint32("xroce.ack.nak_csn", "NAK CSN", base.DEC),

	-- PROBE / PROBE_REPLY
	p_flags = ProtoField.uint8("xroce.probe.flags", "Flags", base.HEX),
	p_rsvd0 = ProtoField.uint8("xroce.probe.rsvd0", "Reserved", base.HEX),
	p_seq = ProtoField.uint32("xroce.probe.seq", "Probe sequence", base.DEC),
	p_ts = ProtoField.uint32("xroce.probe.ts", "Timestamp", base.DEC),
	p_hint = ProtoField.uint32("xroce.probe.rate_hint", "Rate hint (Mbit/s)", base.DEC),
	p_rsvd1 = ProtoField.uint32("xroce.probe.rsvd1", "Reserved", base.HEX),

	-- CTRL
	c_op = ProtoField.uint8("xroce.ctrl.op", "Operation", base.DEC, CTRL_NAMES),
	c_status = ProtoField.uint16("xroce.ctrl.status", "Status (errno)", base.DEC, ERRNO_NAMES),
	c_nonce = ProtoField.uint64("xroce.ctrl.nonce", "Nonce", base.HEX),
	c_src_conn = ProtoField.uint32("xroce.ctrl.src_conn", "Source connection", base.DEC),
	c_mtu = ProtoField.uint32("xroce.ctrl.mtu", "MTU", base.DEC),
	c_rx_token = ProtoField.uint64("xroce.ctrl.rx_token", "Receive token", base.HEX),
	c_init_psn = ProtoField.uint32("xroce.ctrl.init_psn", "Initial PSN", base.DEC),
	c_init_csn = ProtoField.uint32("xroce.ctrl.init_csn", "Initial CSN (CLOSE: next CSN expected)", base.DEC),
	c_data_port = ProtoField.uint16("xroce.ctrl.data_port", "Data port", base.DEC),
	c_sport_lo = ProtoField.uint16("xroce.ctrl.sport_lo", "First source port", base.DEC),
	c_sport_n = ProtoField.uint16("xroce.ctrl.sport_n", "Source ports", base.DEC),
	c_nplanes = ProtoField.uint8("xroce.ctrl.nplanes", "Planes", base.DEC),
	c_family = ProtoField.uint8("xroce.ctrl.family", "Family", base.DEC, FAMILY_NAMES),
	c_npaths = ProtoField.uint32("xroce.ctrl.npaths", "Paths", base.DEC),
	c_flags = ProtoField.uint32("xroce.ctrl.flags", "Flags", base.HEX),
	c_addr = ProtoField.bytes("xroce.ctrl.addr", "Plane address (raw)"),
	c_addr4 = ProtoField.ipv4("xroce.ctrl.addr4", "Plane address"),
	c_addr6 = ProtoField.ipv6("xroce.ctrl.addr6", "Plane address"),
	c_priv_len = ProtoField.uint8("xroce.ctrl.priv_len", "Private data length", base.DEC),
	c_rsvd = ProtoField.bytes("xroce.ctrl.rsvd", "Reserved"),
	c_priv = ProtoField.bytes("xroce.ctrl.priv", "Private data"),
	c_cookie = ProtoField.bytes("xroce.ctrl.cookie", "Cookie"),
	c_nonce2 = ProtoField.uint64("xroce.ctrl.nonce2", "Listener nonce", base.HEX),
	c_mac = ProtoField.bytes("xroce.ctrl.mac", "MAC (HMAC-SHA-512/256)"),

	trailer = ProtoField.bytes("xroce.trailer", "Trailing bytes"),
}
local flist = {}
for _, f in pairs(F) do flist[#flist + 1] = f end
xr.fields = flist

local E = {
	truncated = ProtoExpert.new("xroce.expert.truncated", "Truncated xroce header",
		expert.group.MALFORMED, expert.severity.ERROR),
	version = ProtoExpert.new("xroce.expert.version", "Unknown xroce version",
		expert.group.MALFORMED, expert.severity.ERROR),
	type = ProtoExpert.new("xroce.expert.type", "Unknown xroce packet type",
		expert.group.MALFORMED, expert.severity.ERROR),
	length = ProtoExpert.new("xroce.expert.length", "Datagram length does not match the packet type",
		expert.group.MALFORMED, expert.severity.WARN),
	value = ProtoExpert.new("xroce.expert.value", "Field value not allowed here",
		expert.group.PROTOCOL, expert.severity.WARN),
	rsvd = ProtoExpert.new("xroce.expert.rsvd", "Reserved field is not zero",
		expert.group.PROTOCOL, expert.severity.NOTE),
	bounds = ProtoExpert.new("xroce.expert.bounds", "Payload runs past the end of its message",
		expert.group.MALFORMED, expert.severity.ERROR),
	retx = ProtoExpert.new("xroce.expert.retx", "Retransmission",
		expert.group.SEQUENCE, expert.severity.NOTE),
	ece = ProtoExpert.new("xroce.expert.ece", "Congestion experienced (CE echo)",
		expert.group.SEQUENCE, expert.severity.NOTE),
	nak = ProtoExpert.new("xroce.expert.nak", "NAK: packet rejected",
		expert.group.RESPONSE_CODE, expert.severity.WARN),
	reject = ProtoExpert.new("xroce.expert.reject", "Connection rejected",
		expert.group.RESPONSE_CODE, expert.severity.WARN),
}
xr.experts = { E.truncated, E.version, E.type, E.length, E.value, E.rsvd,
	E.bounds, E.retx, E.ece, E.nak, E.reject }

-- Preferences -------------------------------------------------------------
xr.prefs.data_port = Pref.uint("Data UDP port", 4793,
	"UDP port of the xroce data plane (DATA, ACK, NAK, PROBE); 0 = none")
xr.prefs.ctrl_port = Pref.uint("Control UDP port", 4794,
	"UDP port of the xroce control sockets (CONNECT ... CLOSE_ACK); 0 = none")
xr.prefs.heuristic = Pref.bool("Heuristic detection", true,
	"Recognise xroce on other UDP ports by its structure (ACKs to the sender's "
	.. "entropy port, traffic on a non-default data port)")

-- Helpers -----------------------------------------------------------------
local function name_of(tbl, v)
	return tbl[v] or string.format("unknown(%d)", v)
end

local function fmt(v) return string.format("%d", v) end

-- The one-line summary goes to the Info column and onto the protocol's
-- tree item.
local function summary(pinfo, tree, text)
	pinfo.cols.info:set(text)
	tree:set_text("xroce, " .. text)
end

-- Add the fields of a layout ({field, offset, length[, bitfields]}) that fit
-- in the captured bytes; returns the number of entries added.
local function add_layout(tree, tvb, layout, avail)
	for i, e in ipairs(layout) do
		local f, off, len, bits = e[1], e[2], e[3], e[4]
		if off + len > avail then return i - 1 end
		local item = tree:add(f, tvb(off, len))
		if bits then
			for _, b in ipairs(bits) do item:add(b, tvb(off, len)) end
		end
	end
	return #layout
end

-- Add the layout, or flag the packet as truncated and return false.
local function dissect_fixed(tree, tvb, pinfo, layout, need, tname)
	local avail = tvb:len()
	add_layout(tree, tvb, layout, avail)
	if avail < need then
		tree:add_proto_expert_info(E.truncated, string.format(
			"%s header needs %d bytes, only %d present", tname, need, avail))
		summary(pinfo, tree, string.format("%s (truncated: %d of %d bytes)",
			tname, avail, need))
		return false
	end
	return true
end

-- Flag datagram bytes beyond a fixed-size header.
local function check_exact(tree, tvb, len, tname)
	local rlen = tvb:reported_len()
	if rlen > len then
		local item = tree
		if tvb:len() > len then item = tree:add(F.trailer, tvb(len, tvb:len() - len)) end
		item:add_proto_expert_info(E.length, string.format(
			"%s is %d bytes, datagram carries %d", tname, len, rlen))
	end
end

local function flag_names(v, names)
	local out = {}
	for _, n in ipairs(names) do
		if v % (2 * n[1]) >= n[1] then out[#out + 1] = n[2] end
	end
	if #out == 0 then return "" end
	return " [" .. table.concat(out, ",") .. "]"
end

local DATA_FLAGS = { { 1, "AR" }, { 2, "RETX" }, { 4, "LAST" }, { 8, "DUP" } }
local ACK_FLAGS = { { 1, "ECE" }, { 2, "DUP" }, { 4, "OOW" }, { 8, "EPOCH" },
	{ 16, "KNEXT" }, { 32, "SACK" } }

-- "1003,1005-1009": runs of consecutive PSNs as ranges; at most max_runs.
local function psn_runs(psns, max_runs)
	local out, i = {}, 1
	while i <= #psns do
		local j = i
		while j < #psns and (psns[j] + 1) % TWO32 == psns[j + 1] do j = j + 1 end
		if max_runs and #out == max_runs then
			out[#out + 1] = string.format("...(+%d)", #psns - i + 1)
			break
		end
		if j == i then
			out[#out + 1] = fmt(psns[i])
		else
			out[#out + 1] = fmt(psns[i]) .. "-" .. fmt(psns[j])
		end
		i = j + 1
	end
	return table.concat(out, ",")
end

-- DATA -------------------------------------------------------------------
local DATA_LAYOUT = {
	{ F.d_flags, 1, 1, { F.d_ar, F.d_retx, F.d_last, F.d_dup, F.d_frsvd } },
	{ F.opcode, 2, 1 }, { F.path, 3, 1 }, { F.dst_conn, 4, 4 },
	{ F.token, 8, 8 }, { F.psn, 16, 4 }, { F.psn_base, 20, 4 },
	{ F.csn, 24, 4 }, { F.ts, 28, 4 }, { F.raddr, 32, 8 }, { F.rkey, 40, 4 },
	{ F.msg_id, 44, 4 }, { F.msg_len, 48, 4 }, { F.msg_off, 52, 4 },
	{ F.imm, 56, 4 }, { F.stream, 60, 2 }, { F.ssn, 62, 2 },
}

local function dissect_data(tvb, pinfo, tree)
	if not dissect_fixed(tree, tvb, pinfo, DATA_LAYOUT, DATA_LEN, "DATA") then return end
	local flags, op = tvb(1, 1):uint(), tvb(2, 1):uint()
	local path, conn = tvb(3, 1):uint(), tvb(4, 4):uint()
	local psn, psn_base, csn = tvb(16, 4):uint(), tvb(20, 4):uint(), tvb(24, 4):uint()
	local msg_id, msg_len, msg_off = tvb(44, 4):uint(), tvb(48, 4):uint(), tvb(52, 4):uint()
	local stream, ssn = tvb(60, 2):uint(), tvb(62, 2):uint()
	-- The payload runs to the end of the datagram (reported length, so a
	-- short snaplen does not change what the header says).
	local plen = tvb:reported_len() - DATA_LEN
	if tvb:len() > DATA_LEN then
		tree:add(F.payload, tvb(DATA_LEN, tvb:len() - DATA_LEN))
	end
	tree:add(F.payload_len, plen):set_generated()
	local end_off = msg_off + plen
	local end_item = tree:add(F.msg_end, end_off % TWO32)
	end_item:set_generated()

	if not OPCODE_NAMES[op] then
		tree:add_proto_expert_info(E.value, string.format("unknown opcode %d", op))
	end
	if flags >= 16 then
		tree:add_proto_expert_info(E.rsvd, string.format("reserved flag bits 0x%02x", flags - flags % 16))
	end
	if end_off > msg_len then
		end_item:add_proto_expert_info(E.bounds, string.format(
			"offset %d + payload %d > message length %d", msg_off, plen, msg_len))
	elseif flags % 8 >= 4 and end_off ~= msg_len then
		end_item:add_proto_expert_info(E.value, string.format(
			"LAST packet ends at %d, message length is %d", end_off, msg_len))
	end
	-- psn_base later than psn (serial arithmetic) cannot be right.
	local d = (psn - psn_base) % TWO32
	if d >= TWO32 / 2 then
		tree:add_proto_expert_info(E.value, "psn_base is after psn")
	end
	if flags % 4 >= 2 then
		tree:add_proto_expert_info(E.retx, "retransmission (RETX flag)")
	end

	local info = string.format("DATA %s conn %d path %d psn %d csn %d msg %d off %d/%d len %d",
		name_of(OPCODE_NAMES, op), conn, path, psn, csn, msg_id, msg_off, msg_len, plen)
	if stream ~= 0 or ssn ~= 0 then info = info .. string.format(" stream %d ssn %d", stream, ssn) end
	if op == 2 or op == 4 then info = info .. string.format(" imm 0x%08x", tvb(56, 4):uint()) end
	summary(pinfo, tree, info .. flag_names(flags, DATA_FLAGS))
end

-- ACK / NAK --------------------------------------------------------------
local ACK_LAYOUT = {
	{ F.a_flags, 1, 1, { F.a_ece, F.a_dup, F.a_oow, F.a_epoch, F.a_knext, F.a_sack, F.a_frsvd } },
	{ F.reason, 2, 1 }, { F.path, 3, 1 }, { F.dst_conn, 4, 4 },
	{ F.token, 8, 8 }, { F.cack, 16, 4 }, { F.ack_psn, 20, 4 },
	{ F.ts_echo, 24, 4 }, { F.rate_hint, 28, 4 },
}
local ACK_TAIL = {
	{ F.ce_pkts, 64, 4 }, { F.rx_pkts, 68, 4 }, { F.csn_cum, 72, 4 },
	{ F.nak_csn, 76, 4 },
}

-- The SACK bitmap at offset 32: raw, per word, and decoded into PSNs.
-- Bit i of word w (a big-endian u64, bit 0 = least significant) set means
-- PSN cack + 1 + 64w + i arrived.
local function dissect_sack(tvb, tree, cack)
	local st = tree:add(F.sack, tvb(32, SACK_WORDS * 8))
	local psns = {}
	for w = 0, SACK_WORDS - 1 do
		local woff = 32 + 8 * w
		local wi = st:add(F.sack_word, tvb(woff, 8))
		wi:prepend_text(string.format("[%d] ", w))
		for byte = 7, 0, -1 do -- least significant byte first
			local b = tvb(woff + byte, 1):uint()
			for k = 0, 7 do
				if math.floor(b / 2 ^ k) % 2 == 1 then
					local i = (7 - byte) * 8 + k
					local psn = (cack + 1 + 64 * w + i) % TWO32
					psns[#psns + 1] = psn
					wi:add(F.sack_psn, tvb(woff + byte, 1), psn):set_generated()
				end
			end
		end
	end
	st:add(F.sack_count, #psns):set_generated()
	st:add(F.sack_list, "{" .. psn_runs(psns) .. "}"):set_generated()
	st:append_text(string.format(" (%d PSNs after cack)", #psns))
	return psns
end

local function dissect_ack(tvb, pinfo, tree, t)
	local tname = TYPE_NAMES[t]
	local avail = tvb:len()
	add_layout(tree, tvb, ACK_LAYOUT, avail)
	local psns
	if avail >= 64 then
		psns = dissect_sack(tvb, tree, tvb(16, 4):uint())
	end
	add_layout(tree, tvb, ACK_TAIL, avail)
	if not psns or avail < ACK_LEN then
		tree:add_proto_expert_info(E.truncated, string.format(
			"%s needs %d bytes, only %d present", tname, ACK_LEN, avail))
		summary(pinfo, tree, string.format("%s (truncated: %d of %d bytes)", tname, avail, ACK_LEN))
		return
	end
	check_exact(tree, tvb, ACK_LEN, tname)

	local flags, reason = tvb(1, 1):uint(), tvb(2, 1):uint()
	local path, conn, cack = tvb(3, 1):uint(), tvb(4, 4):uint(), tvb(16, 4):uint()
	local nak_csn, hint = tvb(76, 4):uint(), tvb(28, 4):uint()
	if flags >= 64 then
		tree:add_proto_expert_info(E.rsvd, string.format("reserved flag bits 0x%02x", flags - flags % 64))
	end
	-- Without the SACK flag (0x20) the receiver of this answer reads the
	-- words as zero (a keyed MAC does not cover them).
	if flags % 64 < 32 and #psns > 0 then
		tree:add_proto_expert_info(E.value, "SACK bits without the SACK flag: read as zero")
		psns = {}
	end
	if flags % 2 == 1 then
		tree:add_proto_expert_info(E.ece, "the acknowledged packet was CE marked")
	end
	local info
	if t == T_ACK then
		if reason ~= 0 then
			tree:add_proto_expert_info(E.value, string.format("ACK with NAK reason %d", reason))
		end
		if nak_csn ~= 0 then
			tree:add_proto_expert_info(E.value, "ACK with a non-zero nak_csn")
		end
		info = string.format("ACK conn %d path %d cack %d", conn, path, cack)
	else
		if reason == 0 or not NAK_NAMES[reason] then
			tree:add_proto_expert_info(E.value, string.format("NAK reason %d", reason))
		end
		tree:add_proto_expert_info(E.nak, string.format("NAK %s of csn %d",
			name_of(NAK_NAMES, reason), nak_csn))
		info = string.format("NAK %s conn %d path %d cack %d csn %d",
			name_of(NAK_NAMES, reason), conn, path, cack, nak_csn)
	end
	if #psns > 0 then info = info .. " sack {" .. psn_runs(psns, 12) .. "}" end
	if hint ~= 0 then info = info .. string.format(" hint %d", hint) end
	summary(pinfo, tree, info .. flag_names(flags, ACK_FLAGS))
end

-- PROBE / PROBE_REPLY ----------------------------------------------------
local PROBE_LAYOUT = {
	{ F.p_flags, 1, 1 }, { F.p_rsvd0, 2, 1 }, { F.path, 3, 1 },
	{ F.dst_conn, 4, 4 }, { F.token, 8, 8 }, { F.p_seq, 16, 4 },
	{ F.p_ts, 20, 4 }, { F.p_hint, 24, 4 }, { F.p_rsvd1, 28, 4 },
}

local function dissect_probe(tvb, pinfo, tree, t)
	local tname = TYPE_NAMES[t]
	if not dissect_fixed(tree, tvb, pinfo, PROBE_LAYOUT, PROBE_LEN, tname) then return end
	check_exact(tree, tvb, PROBE_LEN, tname)
	if tvb(1, 1):uint() ~= 0 then
		tree:add_proto_expert_info(E.rsvd, "probe flags are not zero")
	end
	if tvb(2, 1):uint() ~= 0 or tvb(28, 4):uint() ~= 0 then
		tree:add_proto_expert_info(E.rsvd, "reserved probe bytes are not zero")
	end
	local info = string.format("%s conn %d path %d seq %d", tname,
		tvb(4, 4):uint(), tvb(3, 1):uint(), tvb(16, 4):uint())
	if t == T_PROBE_REPLY then
		info = info .. string.format(" hint %d", tvb(24, 4):uint())
	end
	summary(pinfo, tree, info)
end

-- CTRL -------------------------------------------------------------------
local CTRL_HEAD = {
	{ F.c_op, 1, 1 }, { F.c_status, 2, 2 }, { F.dst_conn, 4, 4 },
	{ F.token, 8, 8 }, { F.c_nonce, 16, 8 }, { F.c_src_conn, 24, 4 },
	{ F.c_mtu, 28, 4 }, { F.c_rx_token, 32, 8 }, { F.c_init_psn, 40, 4 },
	{ F.c_init_csn, 44, 4 }, { F.c_data_port, 48, 2 }, { F.c_sport_lo, 50, 2 },
	{ F.c_sport_n, 52, 2 }, { F.c_nplanes, 54, 1 }, { F.c_family, 55, 1 },
	{ F.c_npaths, 56, 4 }, { F.c_flags, 60, 4 },
}

-- addr[i] at 64 + 16i: IPv4 when v4-mapped (::ffff:a.b.c.d), else IPv6.
-- Returns its text, or nil if it is all zero.
local function dissect_ctrl_addr(tvb, tree, i, valid)
	local off = 64 + 16 * i
	local r = tvb(off, 16)
	local mapped = r:range(0, 10):bytes():tohex() == "00000000000000000000"
		and r:range(10, 2):uint() == 0xffff
	local zero = r:bytes():tohex() == string.rep("0", 32)
	local item, text
	if zero and not valid then
		item = tree:add(F.c_addr, r)
		item:set_text(string.format("addr[%d]: unused", i))
		return nil
	end
	if mapped then
		item = tree:add(F.c_addr4, r:range(12, 4))
		text = tostring(r:range(12, 4):ipv4())
	else
		item = tree:add(F.c_addr6, r)
		text = tostring(r:ipv6())
	end
	item:prepend_text(string.format("[%d] ", i))
	item:add(F.c_addr, r)
	if not valid then
		item:append_text(" (beyond nplanes)")
		item:add_proto_expert_info(E.rsvd, "address beyond nplanes is not zero")
	end
	return text
end

local function dissect_ctrl(tvb, pinfo, tree)
	if not dissect_fixed(tree, tvb, pinfo, CTRL_HEAD, CTRL_LEN, "CTRL") then
		-- the addresses and private data are not added piecemeal
		return
	end
	local op, status = tvb(1, 1):uint(), tvb(2, 2):uint()
	local nplanes, family = tvb(54, 1):uint(), tvb(55, 1):uint()
	local at = tree:add(xr, tvb(64, 64), "Plane addresses")
	local addrs = {}
	for i = 0, CTRL_MAX_PLANES - 1 do
		local a = dissect_ctrl_addr(tvb, at, i, i < nplanes)
		if a and i < nplanes then addrs[#addrs + 1] = a end
	end
	local plen = tvb(128, 1):uint()
	local pl_item = tree:add(F.c_priv_len, tvb(128, 1))
	tree:add(F.c_rsvd, tvb(129, 3))
	if plen > CTRL_PRIV_MAX then
		pl_item:add_proto_expert_info(E.value, string.format(
			"private data length %d > %d", plen, CTRL_PRIV_MAX))
		plen = CTRL_PRIV_MAX
	end
	if plen > 0 then tree:add(F.c_priv, tvb(132, plen)) end
	tree:add(F.c_cookie, tvb(192, 16))
	tree:add(F.c_nonce2, tvb(208, 8))
	tree:add(F.c_rsvd, tvb(216, 8))
	tree:add(F.c_mac, tvb(224, 32))
	check_exact(tree, tvb, CTRL_LEN, "CTRL")

	if not CTRL_NAMES[op] then
		tree:add_proto_expert_info(E.value, string.format("unknown control op %d", op))
	end
	if op == 1 or op == 2 then
		if nplanes < 1 or nplanes > CTRL_MAX_PLANES then
			tree:add_proto_expert_info(E.value, string.format("nplanes %d not in 1..4", nplanes))
		end
		if family ~= 4 and family ~= 6 then
			tree:add_proto_expert_info(E.value, string.format("family %d is neither 4 nor 6", family))
		end
	end
	if op == 3 then
		tree:add_proto_expert_info(E.reject, string.format("rejected: %s",
			name_of(ERRNO_NAMES, status)))
	end
	if tvb(60, 4):uint() ~= 0 or tvb(129, 3):bytes():tohex() ~= "000000" then
		tree:add_proto_expert_info(E.rsvd, "flags / reserved bytes are not zero")
	end

	local info = "CTRL " .. name_of(CTRL_NAMES, op)
	local conn, src = tvb(4, 4):uint(), tvb(24, 4):uint()
	if op ~= 1 then info = info .. string.format(" conn %d", conn) end
	info = info .. string.format(" src_conn %d", src)
	if op == 1 or op == 2 then
		info = info .. string.format(" %s port %d paths %d psn %d csn %d",
			table.concat(addrs, ","), tvb(48, 2):uint(), tvb(56, 4):uint(),
			tvb(40, 4):uint(), tvb(44, 4):uint())
		if plen > 0 then info = info .. string.format(" priv %d", plen) end
	elseif op == 3 then
		info = info .. " status " .. name_of(ERRNO_NAMES, status)
	elseif op == 4 then
		info = info .. string.format(" csn %d", tvb(44, 4):uint())
	end
	summary(pinfo, tree, info)
end

-- Entry points -------------------------------------------------------------
function xr.dissector(tvb, pinfo, tree)
	local avail = tvb:len()
	if avail < 1 then return 0 end
	pinfo.cols.protocol = "xroce"
	local vt = tvb(0, 1):uint()
	local ver, t = math.floor(vt / 16), vt % 16
	local tname = TYPE_NAMES[t] or string.format("type %d", t)
	local sub = tree:add(xr, tvb(), "xroce " .. tname)
	sub:add(F.version, tvb(0, 1))
	local ti = sub:add(F.type, tvb(0, 1))
	if ver ~= XR_VERSION then
		sub:add_proto_expert_info(E.version, string.format("version %d (expected %d)", ver, XR_VERSION))
		summary(pinfo, sub, string.format("unknown version %d (type %d), %d bytes", ver, t, tvb:reported_len()))
		return avail
	end
	if t == T_DATA then
		dissect_data(tvb, pinfo, sub)
	elseif t == T_ACK or t == T_NAK then
		dissect_ack(tvb, pinfo, sub, t)
	elseif t == T_PROBE or t == T_PROBE_REPLY then
		dissect_probe(tvb, pinfo, sub, t)
	elseif t == T_CTRL then
		dissect_ctrl(tvb, pinfo, sub)
	else
		ti:add_proto_expert_info(E.type, string.format("unknown type %d", t))
		summary(pinfo, sub, string.format("unknown type %d, %d bytes", t, tvb:reported_len()))
	end
	return avail
end

-- Heuristic: structure checks strict enough for arbitrary UDP traffic.
-- Replies from the data port (ACK/NAK 80 bytes, PROBE_REPLY 32) are the
-- case that matters: they go to the sender's ephemeral entropy port.
local function looks_like_xroce(tvb)
	local len = tvb:len()
	local rlen = tvb:reported_len()
	if len < 4 then return false end
	local vt = tvb(0, 1):uint()
	if math.floor(vt / 16) ~= XR_VERSION then return false end
	local t, flags, b2 = vt % 16, tvb(1, 1):uint(), tvb(2, 1):uint()
	if t == T_ACK or t == T_NAK then
		if rlen ~= ACK_LEN or flags >= 64 then return false end
		if t == T_ACK then return b2 == 0 end
		return b2 >= 1 and b2 <= 6
	elseif t == T_PROBE or t == T_PROBE_REPLY then
		return rlen == PROBE_LEN and flags == 0 and b2 == 0
	elseif t == T_DATA then
		if rlen < DATA_LEN or len < DATA_LEN or flags >= 16 or b2 < 1 or b2 > 6 then
			return false
		end
		local plen = rlen - DATA_LEN
		return tvb(52, 4):uint() + plen <= tvb(48, 4):uint()
	elseif t == T_CTRL then
		if rlen ~= CTRL_LEN or len < CTRL_LEN or flags < 1 or flags > 6 then
			return false
		end
		local fam, np = tvb(55, 1):uint(), tvb(54, 1):uint()
		if tvb(128, 1):uint() > CTRL_PRIV_MAX or np > CTRL_MAX_PLANES then
			return false
		end
		-- CONNECT / ACCEPT describe the sender's planes; REJECT and
		-- the CLOSE pair may leave them zero.
		if flags <= 2 then
			return (fam == 4 or fam == 6) and np >= 1
		end
		return fam == 0 or fam == 4 or fam == 6
	end
	return false
end

local function heuristic(tvb, pinfo, tree)
	if not xr.prefs.heuristic or not looks_like_xroce(tvb) then return false end
	xr.dissector(tvb, pinfo, tree)
	return true
end
xr:register_heuristic("udp", heuristic)

local udp_port = DissectorTable.get("udp.port")
local registered = {}
local function register_ports()
	for _, p in ipairs(registered) do udp_port:remove(p, xr) end
	registered = {}
	for _, p in ipairs({ xr.prefs.data_port, xr.prefs.ctrl_port }) do
		if p > 0 and p < 65536 then
			udp_port:add(p, xr)
			registered[#registered + 1] = p
		end
	end
end
udp_port:add_for_decode_as(xr)
register_ports()

function xr.prefs_changed()
	register_ports()
end
