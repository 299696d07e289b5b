"""test_xrctrl.py: xrctrl.py (the attacker's copy of the control message)
against include/contract/wire.h: every offset wire.h asserts for struct
xr_ctrl_msg, the size, the ops; and its signature against libsodium's
crypto_auth_hmacsha512256 (the library's), when libsodium can be loaded.

  python3 tests/lib/xrtest/test_xrctrl.py     (run by make unit)"""
import ctypes
import ctypes.util
import os
import re
import unittest

import xrctrl
from cheader import Header

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..')
WIRE = open(os.path.join(ROOT, 'include/contract/wire.h')).read()


class Layout(unittest.TestCase):
    def test_offsets(self):
        asserted = dict((f, int(n)) for f, n in re.findall(
            r'XR_OFF\(struct xr_ctrl_msg,\s*(\w+)\)\s*==\s*(\d+)', WIRE))
        self.assertGreaterEqual(len(asserted), 8)
        mine = {name: off for name, _, off in xrctrl.FIELDS}
        for f, off in asserted.items():
            self.assertEqual(mine[f], off, f)

    def test_size_and_ops(self):
        self.assertIn('sizeof(struct xr_ctrl_msg) == %d' % xrctrl.SIZE, WIRE)
        ops = dict(Header(WIRE).enum('xr_ctrl_op'))
        for v, name in xrctrl.OPS.items():
            self.assertEqual(ops['XR_CTRL_' + name.upper()], v)

    def test_round_trip(self):
        m = xrctrl.connect('10.1.2.3', nonce=77)
        f = xrctrl.unpack(m)
        self.assertEqual((f['op'], f['nonce'], f['nplanes'], f['family']),
                         (xrctrl.CONNECT, 77, 1, 4))
        self.assertEqual(f['addr'][:16], xrctrl.mapped('10.1.2.3'))
        self.assertIsNone(xrctrl.unpack(m[:100]))


class Signature(unittest.TestCase):
    def test_matches_libsodium(self):
        name = ctypes.util.find_library('sodium')
        if not name:
            self.skipTest('libsodium not found')
        na = ctypes.CDLL(name)
        self.assertEqual(na.sodium_init() >= 0, True)
        key = bytes(range(32))
        m = xrctrl.sign(key, xrctrl.connect('10.0.0.1', nonce=5))
        out = ctypes.create_string_buffer(32)
        na.crypto_auth_hmacsha512256(out, m[:xrctrl.MAC_OFF],
                                     ctypes.c_ulonglong(xrctrl.MAC_OFF), key)
        self.assertEqual(out.raw, m[xrctrl.MAC_OFF:])
        self.assertTrue(xrctrl.unpack(m)['flags'] & xrctrl.CF_AUTH)
        # A flipped bit makes another MAC.
        n = bytearray(m)
        n[20] ^= 1
        self.assertNotEqual(xrctrl.sign(key, bytes(n))[xrctrl.MAC_OFF:], m[xrctrl.MAC_OFF:])


if __name__ == '__main__':
    unittest.main()
