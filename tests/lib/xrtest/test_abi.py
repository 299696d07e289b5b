"""test_abi.py: abi.py (the tests' one Python copy of the telemetry and
map layouts, the counters and the path states) against the headers it
copies, include/contract/abi.h and include/xroce/xroce.h: every field's
name, offset and size, the constants and the enumerators must agree.  The
header is read by cheader.py, whose layouts are first checked against the
header's own _Static_asserts; a test also edits the header in memory to
show that a change there is caught.

  python3 tests/lib/xrtest/test_abi.py     (run by tests/run-all.sh unit)"""
import os
import unittest

import abi
from cheader import Header

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..')


def read(rel):
    with open(os.path.join(ROOT, rel)) as f:
        return f.read()


def contract(abi_text=None):
    """abi.h with the wire.h it includes (the constants it uses)."""
    return Header(abi_text if abi_text is not None else read('include/contract/abi.h'),
                  read('include/contract/wire.h'))


def mismatches(h):
    """What abi.py says differently from the header h, as messages."""
    bad = []
    for name, fields in abi.LAYOUTS.items():
        size, _, cf = h.layout(name)
        mine = abi.layout(fields)
        if [f[0] for f in cf] != [f[0] for f in mine]:
            bad.append('struct %s: fields %s, abi.py %s' % (name, [f[0] for f in cf],
                                                            [f[0] for f in mine]))
            continue
        for c, m in zip(cf, mine):
            if c != m:
                bad.append('struct %s.%s: offset %d size %d, abi.py offset %d size %d'
                           % (name, c[0], c[1], c[2], m[1], m[2]))
        if size != sum(f[2] for f in mine):
            bad.append('struct %s: %d bytes (with padding), abi.py %d'
                       % (name, size, sum(f[2] for f in mine)))
    for k, v in abi.CONSTANTS.items():
        if h.const(k) != v:
            bad.append('%s = %#x, abi.py %#x' % (k, h.const(k), v))
    stats = [k[len('XR_STAT_'):].lower() for k, _ in h.enum('xr_stat') if k != 'XR_STAT_MAX']
    if stats != list(abi.STATS):
        bad.append('enum xr_stat %s, abi.py %s' % (stats, list(abi.STATS)))
    if [v for _, v in h.enum('xr_stat')] != list(range(len(abi.STATS) + 1)):
        bad.append('enum xr_stat is not 0, 1, 2, ...')
    return bad


class HeaderParser(unittest.TestCase):
    def test_static_asserts(self):
        """cheader.py lays the structs out as the compiler does: the
        header's own size claims hold for every struct it can lay out."""
        h = contract()
        claims = Header(read('include/contract/abi.h')).size_asserts()
        self.assertIn('xr_telem_path', claims)
        checked = 0
        for name, size in claims.items():
            try:
                got = h.layout(name)[0]
            except ValueError:
                continue  # a union (struct xr_evt): not ours to copy
            self.assertEqual(got, size, 'struct %s' % name)
            checked += 1
        self.assertGreaterEqual(checked, 4)


class AbiModule(unittest.TestCase):
    def test_matches_abi_h(self):
        self.assertEqual(mismatches(contract()), [])

    def test_derived_sizes(self):
        h = contract()
        self.assertEqual(abi.TELEM_SLOT_SIZE, h.layout('xr_telem')[0])
        self.assertEqual(abi.TELEM_HDR.size, h.layout('xr_telem_hdr')[0])
        self.assertEqual(abi.TELEM_BYTES, h.const(
            '((64 + XR_TELEM_SLOTS * %d + XR_PAGE_SIZE - 1) & ~(XR_PAGE_SIZE - 1))'
            % abi.TELEM_SLOT_SIZE))

    def test_path_states(self):
        h = Header(read('include/xroce/xroce.h'))
        self.assertEqual(dict(h.enum('xroce_path_state')),
                         {'XROCE_PATH_GOOD': abi.PATH_GOOD,
                          'XROCE_PATH_CONGESTED': abi.PATH_CONGESTED,
                          'XROCE_PATH_SUSPECT': abi.PATH_SUSPECT,
                          'XROCE_PATH_DOWN': abi.PATH_DOWN})

    def test_header_change_is_caught(self):
        """The check can fail: abi.h edited in memory (a field widened, one
        added, a counter added, a constant changed), abi.py not."""
        text = read('include/contract/abi.h')
        edits = [(r'__u32 cwnd;', '__u64 cwnd;'),
                 (r'__u64 timeouts;', '__u64 timeouts;\n\t__u32 extra;'),
                 (r'XR_STAT_DROP_TXR,', 'XR_STAT_DROP_TXR,\n\tXR_STAT_NEW,'),
                 (r'#define XR_TELEM_VERSION 3', '#define XR_TELEM_VERSION 4'),
                 (r'__u64 iova;', '__u32 iova;')]
        for old, new in edits:
            self.assertIn(old, text)
            changed = contract(text.replace(old, new, 1))
            self.assertNotEqual(mismatches(changed), [], 'not caught: %s -> %s' % (old, new))


if __name__ == '__main__':
    unittest.main(verbosity=2)
