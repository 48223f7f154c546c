// Sort keys, pasted into the sort and searchsorted kernels: 32-bit keys whose unsigned order is
// the sort order (src/backend/sort_keys.h computes the same on the host). NaN is above +inf
// and NaNs are equal; -0.0 equals 0.0.

fn key_f32(bits: u32) -> u32 {
    if ((bits & 0x7fffffffu) > 0x7f800000u) { return 0xffffffffu; }
    var b = bits;
    if (b == 0x80000000u) { b = 0u; }
    if ((b & 0x80000000u) != 0u) { return ~b; }
    return b | 0x80000000u;
}

// Halves (f16, bf16: inf is the bits of +inf) keep their own bits: a conversion to f32
// might flush subnormals on some devices.
fn key_half(bits: u32, inf: u32) -> u32 {
    if ((bits & 0x7fffu) > inf) { return 0xffffu; }
    var b = bits;
    if (b == 0x8000u) { b = 0u; }
    if ((b & 0x8000u) != 0u) { return ~b & 0xffffu; }
    return b | 0x8000u;
}

// Whether pair (ka, pa) sorts after (kb, pb): by key, then position, so the order is total
// and a sorting network's result is that of a stable sort.
fn pair_after(ka: u32, pa: u32, kb: u32, pb: u32) -> bool {
    return ka > kb || (ka == kb && pa > pb);
}

// Element offset of row r of a view whose other dimensions (ndim of them) have the given
// shape and strides, counted row-major.
fn view_offset(r: u32, ndim: u32, shape: array<vec4<u32>, 2>, strides: array<vec4<i32>, 2>) -> i32 {
    var rem = r;
    var at = 0;
    for (var d = i32(ndim) - 1; d >= 0; d = d - 1) {
        let n = shape[d / 4][d % 4];
        at = at + i32(rem % n) * strides[d / 4][d % 4];
        rem = rem / n;
    }
    return at;
}
