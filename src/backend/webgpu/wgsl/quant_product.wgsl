// The quantized products' parameters and bindings (prepended to quant_matmul and
// quant_matvec_lanes, which take the same operands: quant.c fills one struct for both; the
// lanes kernel reads w, and x where it can, 16 bytes at a time), followed by quant_x8.wgsl's
// quantization of x to q8. ADDEND declares out's and the params' bindings (out is the last
// storage binding, the one a layout makes writable) and finished(i, v), the value
// stored at out[i] for the sum v: v itself, or with an addend binding (a residual add folded
// into the product) addend[a_offset + i] + v, the same f32 add the separate op made.

struct Params {
    M: u32,
    N: u32,
    row_blocks: u32,   // K / 32
    w_first: u32,      // first block of w's view
    w_stride: u32,     // blocks between rows of w
    x_offset: u32,
    x_stride0: i32,
    x_stride1: i32,
    a_offset: u32,     // the addend's first element (unused without one)
    scales: u32,       // w's scales (quant_blocks.wgsl), a u32 word
};

@group(0) @binding(0) var<storage, read> x: array<{{X_TYPE}}>;
@group(0) @binding(1) var<storage, read> wq: array<{{W_TYPE}}>;
{{ADDEND}}
