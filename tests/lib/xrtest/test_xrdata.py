"""test_xrdata.py: xrdata.py (the attacker's copy of the DATA and ACK
headers) against include/contract/wire.h: every offset wire.h asserts for
struct xr_data_hdr and struct xr_ack_hdr, the sizes, the packet types.

  python3 tests/lib/xrtest/test_xrdata.py     (run by make unit)"""
import os
import re
import struct
import unittest

import xrdata
from cheader import Header

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..')
WIRE = open(os.path.join(ROOT, 'include/contract/wire.h')).read()


def asserted(struct_name):
    return dict((f, int(n)) for f, n in re.findall(
        r'XR_OFF\(struct %s,\s*(\w+)\)\s*==\s*(\d+)' % struct_name, WIRE))


class Layout(unittest.TestCase):
    def check(self, struct_name, fields, size):
        want = asserted(struct_name)
        self.assertGreaterEqual(len(want), 10)
        mine = {name: off for name, _, off in fields}
        for f, off in want.items():
            if f in ('mac', 'msn', 'read_id'):   # unions: where token / rkey are
                continue
            self.assertEqual(mine[f], off, f)
        _, fmt, off = max(fields, key=lambda x: x[2])
        self.assertEqual(off + struct.calcsize('!' + fmt), size)
        self.assertIn('sizeof(struct %s) == %d' % (struct_name, size), WIRE)

    def check_first_bytes(self, struct_name, fields):
        """wire.h asserts no offsets for bytes 0..3: they are the struct's
        first four members, each a __u8, in this order."""
        body = re.search(r'struct %s \{(.*?)\}' % struct_name, WIRE, re.S).group(1)
        members = re.findall(r'(__u8|__be16|__be32|__be64|union)\s*(\w*)', body)[:4]
        self.assertEqual([t for t, _ in members], ['__u8'] * 4)
        mine = {off: (name, fmt) for name, fmt, off in fields}
        for i, (_, name) in enumerate(members):
            self.assertEqual(mine[i], (name, 'B'), name)

    def test_data(self):
        self.check('xr_data_hdr', xrdata.DATA_FIELDS, xrdata.DATA_SIZE)
        self.check_first_bytes('xr_data_hdr', xrdata.DATA_FIELDS)

    def test_ack(self):
        self.check('xr_ack_hdr', xrdata.ACK_FIELDS, xrdata.ACK_SIZE)
        self.check_first_bytes('xr_ack_hdr', xrdata.ACK_FIELDS)
        self.assertEqual(xrdata.SACK_WORDS * 8, 32)
        self.assertEqual(Header(WIRE).const('XR_SACK_WORDS'), xrdata.SACK_WORDS)

    def test_types(self):
        types = dict(Header(WIRE).enum('xr_type'))
        self.assertEqual(types['XR_T_DATA'], xrdata.T_DATA)
        self.assertEqual(types['XR_T_ACK'], xrdata.T_ACK)
        self.assertEqual(Header(WIRE).const('XR_VERSION'), xrdata.VERSION)

    def test_round_trip(self):
        a = xrdata.pack_ack(path=3, dst_conn=7, token=9, cack=11, csn_cum=13)
        self.assertEqual(len(a), xrdata.ACK_SIZE)
        self.assertEqual(a[0], 0x12)
        d = bytearray(xrdata.DATA_SIZE)
        d[0] = 0x11
        d[3] = 5
        d[16:20] = (1234).to_bytes(4, 'big')
        f = xrdata.parse_data(bytes(d))
        self.assertEqual((f['path'], f['psn']), (5, 1234))
        self.assertIsNone(xrdata.parse_data(a))
        self.assertIsNone(xrdata.parse_data(bytes(d[:40])))


if __name__ == '__main__':
    unittest.main()
