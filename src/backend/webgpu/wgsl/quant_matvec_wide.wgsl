// out [M, N] (f32) = x [M, K] (f32) @ w^T for w [N, K] in q8_0 / q4_0 blocks, for decoding's
// few rows of x (M of 1 to 3) where each row of w starts on a group of 8 blocks (K a multiple
// of 256, the view's first block and row stride multiples of 8). quant_wide.c generates the
// group's arithmetic (GROUP_BODY) and picks this kernel; quant_matvec.wgsl takes the rest.
//
// Why this shape: a matrix-vector product is bound by the weight's bytes, and what limits a
// kernel that reads 34- or 18-byte blocks a word at a time is not the memory but the load
// requests (half the words of a q8_0 block straddle two storage words). Here a group of 8
// blocks (272 or 144 bytes) starts on a 16-byte boundary, so an invocation fetches it whole
// with 17 or 9 independent 16-byte loads, all in flight at once, and pulls each block's scale
// and values out of registers with shifts fixed when the kernel is generated.
//
// With INT8 (WGT_QUANT_INT8=1) x comes quantized to q8 by quant_x8_pass.wgsl, and each block
// is 8 (q8_0) or 8 (q4_0: 4 for the low nibbles, 4 for the high) integer dot products of four
// packed bytes: no conversion of the weights to floats at all.
//
// Each invocation of a slice owns a row n of w (32 rows per workgroup); the 8 slices of the
// workgroup split the row's groups among them (slice s takes groups s, s + 8, ...). The 32
// invocations of a slice read the same values of x at the same time, so x costs one request
// per load for all of them (and is cached: it is small). The slices' partial sums are added
// in slice order through workgroup memory: the same order every run.

{{PRODUCT}}

const LANES: u32 = 32u;             // rows of w per workgroup
const SLICES: u32 = 8u;             // invocations per row, each over its share of the groups
const MX: u32 = {{MX}}u;            // rows of x (1 to 3)
const GROUP_VECS: u32 = {{GROUP_VECS}}u; // 16-byte words per group of 8 blocks (17 q8_0, 9 q4_0)

var<workgroup> partial: array<vec3<f32>, SLICES * LANES>;

// The four bytes of w as f32 plus 2^23: each byte becomes the low bits of 2^23's mantissa. An
// integer-to-float conversion runs at a fraction of the rate of float arithmetic on GPUs
// (an eighth on NVIDIA's), and this kernel converts every weight value: done by conversions,
// they, not the memory, could set its speed. The callers subtract 2^23 plus the values'
// offset (128 for q8_0's bytes with the sign bit flipped, 8 for q4_0's nibbles), exactly in
// f32.
fn byte_values(w: u32) -> vec4<f32> {
    let bytes = vec4<u32>(w & 0xffu, (w >> 8u) & 0xffu, (w >> 16u) & 0xffu, w >> 24u);
    return bitcast<vec4<f32>>(bytes | vec4<u32>(0x4b000000u));
}

// x: values e .. e + 3 of row m (xv), or with INT8 word i of row m's q8 block b (xq; x is
// then quantized first, quant_x8_pass.wgsl, and a block's products are integer dot products
// of packed bytes, dot4I8Packed, scaled once).
{{X_READ}}

@compute @workgroup_size(LANES * SLICES)
fn main(@builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) groups: vec3<u32>) {
    let lane = li % LANES;
    let slice = li / LANES;
    let n = (wid.x + wid.y * groups.x) * LANES + lane;
    var acc = vec3<f32>(0.0);
    if (n < params.N) {
        let row = (params.w_first + n * params.w_stride) / 8u * GROUP_VECS;
        for (var q = slice; q < params.row_blocks / 8u; q = q + SLICES) {
            let at = row + q * GROUP_VECS;
            let e0 = q * 256u;
{{GROUP_BODY}}
        }
    }
    partial[li] = acc;
    workgroupBarrier();
    if (slice == 0u && n < params.N) {
        var total = partial[lane];
        for (var s = 1u; s < SLICES; s = s + 1u) { total = total + partial[s * LANES + lane]; }
        for (var m = 0u; m < MX; m = m + 1u) { out[m * params.N + n] = finished(m * params.N + n, total[m]); }
    }
}
