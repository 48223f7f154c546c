// The quantized products' parameters and bindings (prepended to quant_matmul, quant_matvec
// and quant_matvec_wide, which take the same operands: quant.c fills one struct for all; the
// wide kernel reads w, and x where it can, 16 bytes at a time), followed by quant_x8.wgsl's
// quantization of x to q8.

struct Params {
    M: u32,
    N: u32,
    row_blocks: u32,   // K / 32
    w_first: u32,      // first block of w's view
    w_stride: u32,     // blocks between rows of w
    x_offset: u32,
    x_stride0: i32,
    x_stride1: i32,
};

@group(0) @binding(0) var<storage, read> x: array<{{X_TYPE}}>;
@group(0) @binding(1) var<storage, read> wq: array<{{W_TYPE}}>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;
