#!/usr/bin/env python3
"""Counts pixels of given colours in a PNG (stdlib only: zlib + unfiltering).
Usage: png_colors.py FILE RRGGBB[:TOLERANCE]...  -> prints 'RRGGBB COUNT' lines."""
import struct
import sys
import zlib


def decode(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and color in (2, 6) and interlace == 0, "unsupported PNG"
            channels = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    prev = bytearray(stride)
    rows = []
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = prev[i]
            c = prev[i - channels] if i >= channels else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, channels, rows


def main():
    width, height, channels, rows = decode(sys.argv[1])
    wanted = []
    for arg in sys.argv[2:]:
        hexcode, _, tol = arg.partition(":")
        wanted.append((hexcode, tuple(int(hexcode[i:i + 2], 16) for i in (0, 2, 4)), int(tol or 0)))
    counts = {h: 0 for h, _, _ in wanted}
    for row in rows:
        for x in range(0, width * channels, channels):
            r, g, b = row[x], row[x + 1], row[x + 2]
            for h, (wr, wg, wb), tol in wanted:
                if abs(r - wr) <= tol and abs(g - wg) <= tol and abs(b - wb) <= tol:
                    counts[h] += 1
    for h, _, _ in wanted:
        print(h, counts[h])


main()
