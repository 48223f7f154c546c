// Convolution as an implicit GEMM (backend.h's general `conv`): for each group g,
// out [Cout_g, N * OH * OW] = w [Cout_g, K] @ cols [K, N * OH * OW] with K = Cin_g * kH * kW,
// where the im2col matrix `cols` is never stored: each K step gathers its slice of it from
// the input straight into workgroup memory. As in matmul.wgsl's tiled kernel, a workgroup of
// 256 invocations owns a tile (64 output channels x 128 output pixels, pixels of every image
// in one row so small images still fill tiles), walks K 16 at a time through one staged
// tile per operand, loads the next step into registers while it multiplies the staged one,
// and gives each invocation a 4 x 8 block of outputs whose pixels lie 16 apart, so a warp's
// staged reads and its output writes are runs of neighbouring pixels.
//
// kH and kW up to 8 are constants of the pipeline, so splitting k into (channel, kh, kw)
// divides by constants (a multiply and a shift), not by a uniform value. IN_DILATED is set for
// transposed convolutions, whose input is dilated by the stride: positions between its
// elements read zero. f16 is stored two per u32 and widened on load; sums are f32; the output
// is f32 (the core adds the bias and rounds to f16).

struct Params {
    cout_g: u32,   // output channels per group (GEMM rows)
    K: u32,        // Cin_g * kH * kW
    cols: u32,     // N * OH * OW (GEMM columns)
    P: u32,        // OH * OW
    OW: u32,
    groups: u32,
    tiles_m: u32,
    tiles_n: u32,
    stride_h: i32,
    stride_w: i32,
    pad_h: i32,    // padding before; negative crops
    pad_w: i32,
    dil_h: i32,
    dil_w: i32,
    in_dil_h: i32,
    in_dil_w: i32,
    vmax_h: i32,   // (H - 1) * in_dil_h: the last input position (negative: an empty input)
    vmax_w: i32,
    x_offset: i32,
    xs_n: i32,
    xs_g: i32,
    xs_c: i32,
    xs_h: i32,
    xs_w: i32,
    w_offset: i32,
    ws_g: i32,
    ws_o: i32,
    ws_c: i32,
    ws_h: i32,
    ws_w: i32,
    kh: u32,       // the kernel's size, for pipelines that do not make it a constant
    kw: u32,
};

@group(0) @binding(0) var<storage, read> x: array<{{STORAGE}}>;
@group(0) @binding(1) var<storage, read> w: array<{{STORAGE}}>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;

// The kernel's size: constants for small kernels, so k splits by constant divisors; larger
// ones (the weight gradient's, whose kernel is the output image) share one pipeline.
fn kernel_h() -> u32 { return {{KH}}; }
fn kernel_w() -> u32 { return {{KW}}; }
const BM: u32 = 64u;
const BN: u32 = 128u;
const BK: u32 = 16u;

var<workgroup> As: array<vec4<f32>, 256>; // [BK][BM / 4]: four channels per entry
var<workgroup> Bs: array<f32, 2048>;      // [BK][BN]

fn load_x(i: i32) -> f32 {
    {{LOAD_X}}
}

fn load_w(i: i32) -> f32 {
    {{LOAD_W}}
}

// The input index along one dimension for virtual position v, or -1 (a zero).
fn source(v: i32, vmax: i32, in_dil: i32) -> i32 {
    if (v < 0 || v > vmax) { return -1; }
    {{SOURCE}}
}

// Step k0 of both operands into registers: the weight tile's entries (k0 + ak, channels
// m0 + am + 16 j) and the gathered column's (rows k0 + brow + 2 j of this pixel), zeros past
// K, past the channels and past the pixels.
fn gather(k0: u32, ra: ptr<function, array<f32, 4>>, rb: ptr<function, array<f32, 8>>, wbase: i32, ak: u32,
          am: u32, m0: u32, brow: u32, bvalid: bool, vh0: i32, vw0: i32, xbase: i32) {
    let KH = kernel_h();
    let KW = kernel_w();
    {
        let k = k0 + ak;
        let ci = k / (KH * KW);
        let r = k % (KH * KW);
        let off = wbase + i32(ci) * params.ws_c + i32(r / KW) * params.ws_h + i32(r % KW) * params.ws_w;
        for (var j = 0u; j < 4u; j = j + 1u) {
            let m = m0 + am + 16u * j;
            var v = 0.0;
            if (k < params.K && m < params.cout_g) { v = load_w(off + i32(m) * params.ws_o); }
            (*ra)[j] = v;
        }
    }
    for (var j = 0u; j < 8u; j = j + 1u) {
        let k = k0 + brow + 2u * j;
        let ci = k / (KH * KW);
        let r = k % (KH * KW);
        let ih = source(vh0 + i32(r / KW) * params.dil_h, params.vmax_h, params.in_dil_h);
        let iw = source(vw0 + i32(r % KW) * params.dil_w, params.vmax_w, params.in_dil_w);
        var v = 0.0;
        if (bvalid && k < params.K && ih >= 0 && iw >= 0) {
            v = load_x(xbase + i32(ci) * params.xs_c + ih * params.xs_h + iw * params.xs_w);
        }
        (*rb)[j] = v;
    }
}

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) nwg: vec3<u32>) {
    let flat = wid.x + wid.y * nwg.x;
    let per_group = params.tiles_m * params.tiles_n;
    if (flat >= per_group * params.groups) { return; }
    let g = flat / per_group;
    let t = flat % per_group;
    // Channel tiles vary fastest: workgroups running together read the same pixels' inputs.
    let m0 = (t % params.tiles_m) * BM;
    let n0 = (t / params.tiles_m) * BN;
    let tx = lid % 16u;
    let ty = lid / 16u;

    // This invocation's column of the gathered tile: one output pixel, fixed for the loop.
    let bcol = n0 + lid % BN;
    let bvalid = bcol < params.cols;
    let img = bcol / params.P;
    let pix = bcol % params.P;
    let vh0 = i32(pix / params.OW) * params.stride_h - params.pad_h;
    let vw0 = i32(pix % params.OW) * params.stride_w - params.pad_w;
    let xbase = params.x_offset + i32(img) * params.xs_n + i32(g) * params.xs_g;
    let brow = lid / BN; // rows brow + 2 j of each step
    // Its entries of the weight tile: k = ak, channels am + 16 j.
    let ak = lid % BK;
    let am = lid / BK;
    let wbase = params.w_offset + i32(g) * params.ws_g;

    var acc: array<vec4<f32>, 8>; // acc[j]: channels m0 + 4 ty .. + 3 at pixel n0 + tx + 16 j
    var ra: array<f32, 4>;
    var rb: array<f32, 8>;
    gather(0u, &ra, &rb, wbase, ak, am, m0, brow, bvalid, vh0, vw0, xbase);
    var k0 = 0u;
    loop {
        workgroupBarrier(); // the previous step's multiply is done with the staged tiles
        for (var j = 0u; j < 4u; j = j + 1u) {
            let m = am + 16u * j;
            As[ak * (BM / 4u) + m / 4u][m % 4u] = ra[j];
        }
        for (var j = 0u; j < 8u; j = j + 1u) {
            Bs[(brow + 2u * j) * BN + lid % BN] = rb[j];
        }
        workgroupBarrier();
        k0 = k0 + BK;
        // The next step's loads are in flight while this one multiplies.
        if (k0 < params.K) {
            gather(k0, &ra, &rb, wbase, ak, am, m0, brow, bvalid, vh0, vw0, xbase);
        }
        for (var kk = 0u; kk < BK; kk = kk + 1u) {
            let a = As[kk * (BM / 4u) + ty];
            for (var j = 0u; j < 8u; j = j + 1u) {
                acc[j] = fma(a, vec4<f32>(Bs[kk * BN + tx + 16u * j]), acc[j]);
            }
        }
        if (k0 >= params.K) { break; }
    }

    for (var j = 0u; j < 8u; j = j + 1u) {
        let col = n0 + tx + 16u * j;
        if (col >= params.cols) { continue; }
        let o_img = col / params.P;
        let o_pix = col % params.P;
        let row0 = (o_img * params.groups + g) * params.cout_g;
        for (var i = 0u; i < 4u; i = i + 1u) {
            let m = m0 + 4u * ty + i;
            if (m < params.cout_g) {
                out[(row0 + m) * params.P + o_pix] = acc[j][i];
            }
        }
    }
}
