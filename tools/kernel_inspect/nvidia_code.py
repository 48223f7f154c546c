#!/usr/bin/env python3
"""Machine code of a compute pipeline from an NVIDIA pipeline-cache dump (cache_pP_mN.bin, as
the pipeline-stats layer writes it), disassembled with nvdisasm where it is on the PATH.

    nvidia_code.py [--arch SM90] cache_p0_m0.bin ...

Writes NAME.code (raw instructions) and NAME.sass beside each dump and prints, for the loop
that the last backward branch closes (the inner loop of a kernel with one), how many
instructions it has and of which kinds.

The layout was read off driver 580's dumps; the driver does not document it, so this is a
reading aid that may need adjusting for other drivers: the cache data holds a zstd frame
(decompressed through libzstd); decompressed, it holds an "NVuc" container whose 32-byte
section entries (after a 32-byte header) give type, size and offset, and the section of type
1 is the code.
"""
import argparse
import collections
import ctypes
import ctypes.util
import re
import shutil
import struct
import subprocess
import sys

ZSTD_MAGIC = bytes.fromhex("28b52ffd")
CONTAINER_MAGIC = b"NVuc"
CODE_SECTION = 1


def decompress(blob):
    """The cache data's zstd frame, decompressed through libzstd (which systems carry even
    where neither the zstd command nor Python's zstandard module is installed)."""
    start = blob.find(ZSTD_MAGIC)
    if start < 0:
        raise ValueError("no zstd frame in the cache data")
    frame = blob[start:]
    try:
        lib = ctypes.CDLL(ctypes.util.find_library("zstd") or "libzstd.so.1")
    except OSError:
        raise ValueError("needs libzstd")
    lib.ZSTD_getFrameContentSize.restype = ctypes.c_ulonglong
    lib.ZSTD_getFrameContentSize.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    lib.ZSTD_decompress.restype = ctypes.c_size_t
    lib.ZSTD_decompress.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t]
    lib.ZSTD_isError.argtypes = [ctypes.c_size_t]
    size = lib.ZSTD_getFrameContentSize(frame, len(frame))
    if size >= (1 << 63):  # unknown or an error
        raise ValueError("the zstd frame does not state its size")
    out = ctypes.create_string_buffer(size)
    n = lib.ZSTD_decompress(out, size, frame, len(frame))
    if lib.ZSTD_isError(n):
        raise ValueError("libzstd could not decompress the frame")
    return out.raw[:n]


def code_section(data):
    base = data.find(CONTAINER_MAGIC)
    if base < 0:
        raise ValueError("no NVuc container in the decompressed data")
    for entry in range(base + 32, base + 32 + 32 * 16, 32):
        kind, size, offset = struct.unpack_from("<III", data, entry)
        if kind == CODE_SECTION and 0 < size and base + offset + size <= len(data):
            return data[base + offset:base + offset + size]
    raise ValueError("no code section in the container")


def loop_summary(sass):
    """Instruction counts by kind of the loop that the last backward branch closes."""
    code = []  # (address, instruction text)
    for l in sass.splitlines():
        m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s*(.*)", l)
        if m:
            code.append((int(m.group(1), 16), m.group(2)))
    index = {address: i for i, (address, _) in enumerate(code)}
    loop = None
    for i, (address, text) in enumerate(code):
        m = re.search(r"BRA (0x[0-9a-f]+)", text)
        if m and int(m.group(1), 16) < address and int(m.group(1), 16) in index:
            loop = (index[int(m.group(1), 16)], i)
    if loop is None:
        return "no loop"
    body = code[loop[0]:loop[1] + 1]
    # The opcode without its predicate (@P0, @!UP1) and modifiers (.FTZ, .128).
    kinds = collections.Counter(re.sub(r"^@!?U?P\w+\s+", "", text).split(" ")[0].split(".")[0] for _, text in body)
    top = ", ".join("%s %d" % kv for kv in kinds.most_common(12))
    return "loop of %d instructions: %s" % (len(body), top)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", default="SM90", help="nvdisasm's name of the architecture (SM90 for Hopper)")
    ap.add_argument("dumps", nargs="+")
    args = ap.parse_args()
    status = 0
    for path in args.dumps:
        try:
            code = code_section(decompress(open(path, "rb").read()))
        except (OSError, ValueError, struct.error) as e:
            print("%s: %s" % (path, e), file=sys.stderr)
            status = 1
            continue
        stem = path[:-4] if path.endswith(".bin") else path
        open(stem + ".code", "wb").write(code)
        line = "%s: %d bytes of code" % (path, len(code))
        if shutil.which("nvdisasm"):
            r = subprocess.run(["nvdisasm", "-b", args.arch, stem + ".code"], capture_output=True, text=True)
            open(stem + ".sass", "w").write(r.stdout + r.stderr)
            line += "; " + (loop_summary(r.stdout) if r.returncode == 0 else "nvdisasm failed: " + r.stderr[:200])
        print(line)
    return status


if __name__ == "__main__":
    sys.exit(main())
