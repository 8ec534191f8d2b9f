"""An independent PNG reader and writer for the demo's tests, using only Python's zlib.

    png_tool.py decode FILE          prints {"width", "height", "pixels": hex RGB} for an 8-bit RGB PNG
    png_tool.py encode FILE W H      writes a W×H RGB gradient PNG, zlib level 9, rows using filters 0-4 in turn
"""

import json
import struct
import sys
import zlib


def chunks(data):
    offset = 8
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset:offset + 4])
        kind = data[offset + 4:offset + 8]
        body = data[offset + 8:offset + 8 + length]
        crc = struct.unpack(">I", data[offset + 8 + length:offset + 12 + length])[0]
        if zlib.crc32(kind + body) & 0xFFFFFFFF != crc:
            raise SystemExit(f"bad CRC in {kind!r}")
        yield kind, body
        offset += 12 + length


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else (b if pb <= pc else c)


def decode(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise SystemExit("not a PNG")
    idat = b""
    for kind, body in chunks(data):
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if (depth, colour, interlace) != (8, 2, 0):
                raise SystemExit("expected 8-bit RGB, not interlaced")
        elif kind == b"IDAT":
            idat += body
    raw = zlib.decompress(idat)
    stride = width * 3
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - 3] if x >= 3 else 0
            b = previous[x]
            c = previous[x - 3] if x >= 3 else 0
            line[x] = (line[x] + [0, a, b, (a + b) // 2, paeth(a, b, c)][kind]) & 0xFF
        rows.append(bytes(line))
        previous = line
    print(json.dumps({"width": width, "height": height, "pixels": b"".join(rows).hex()}))


def encode(path, width, height):
    pixels = [
        bytes(v for x in range(width) for v in ((x * 7 + y * 3) % 256, (x * y) % 256, (255 - x * 5) % 256))
        for y in range(height)
    ]
    raw = bytearray()
    previous = bytes(width * 3)
    for y, line in enumerate(pixels):
        kind = y % 5
        raw.append(kind)
        for x in range(width * 3):
            a = line[x - 3] if x >= 3 else 0
            b = previous[x]
            c = previous[x - 3] if x >= 3 else 0
            raw.append((line[x] - [0, a, b, (a + b) // 2, paeth(a, b, c)][kind]) & 0xFF)
        previous = line

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(bytes(raw), 9)) + chunk(b"IEND", b"")
    open(path, "wb").write(png)
    print(json.dumps({"width": width, "height": height, "pixels": b"".join(pixels).hex()}))


if __name__ == "__main__":
    if sys.argv[1] == "decode":
        decode(sys.argv[2])
    else:
        encode(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
