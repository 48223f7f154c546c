// Attention with the keys split into chunks ("flash decoding"), first pass: a workgroup owns
// R query rows of one batch element and one chunk of the keys, and leaves for each row the
// chunk's maximum score m (base 2), the sum l of exp2(s - m) and the unnormalised output
// sum_j exp2(s_j - m) v_j, in f32, in part[(row * chunks + chunk) * (DV + 2) ..]: m, l, then
// DV values. attention_combine.wgsl merges the chunks of each row.
//
// Per tile of 64 keys, invocation tid computes the scores of key k0 + tid against the R rows
// (q staged in workgroup memory), the rows' maxima are taken (every invocation the same, from
// workgroup memory), and each invocation adds the tile's P v into its output columns tid,
// tid + 64, ... of every row.
//
// With a key count (wgt_attention_prefix), it is read once into workgroup memory and loaded
// back uniform (workgroupUniformLoad), so the loop over tiles ends at min(chunk end, count):
// tiles past the count are not run, and no row of k or v past it is read.

struct Params {
    lq: u32,
    lk: u32,
    batch: u32,          // product of the batch dimensions
    row_blocks: u32,     // ceil(lq / R)
    chunks: u32,         // key chunks per row block
    chunk_keys: u32,     // keys per chunk (the last may hold fewer)
    causal: u32,
    scale_log2: f32,     // scale * log2(e)
    neg_inf_bits: u32,
    groups: u32,         // batch * row_blocks * chunks
    count_offset: u32,   // element offset of the key count (with a count binding)
    pad: u32,
{{VIEWS}}
};

@group(0) @binding(0) var<storage, read> q: array<{{Q_STORAGE}}>;
@group(0) @binding(1) var<storage, read> k: array<{{K_STORAGE}}>;
@group(0) @binding(2) var<storage, read> v: array<{{V_STORAGE}}>;
{{COUNT_DECL}}
@group(0) @binding({{OUT_BINDING}}) var<storage, read_write> part: array<f32>;
@group(0) @binding({{PARAMS_BINDING}}) var<uniform> params: Params;

const R: u32 = {{R}}u;         // query rows per workgroup
const D: u32 = {{D}}u;         // head dimension of q and k
const DV: u32 = {{DV}}u;       // head dimension of v
const DQ: u32 = (D + 3u) / 4u * 4u;
const NV: u32 = (DV + 63u) / 64u; // output columns per invocation and row

var<workgroup> qs: array<vec4<f32>, R * DQ / 4u>; // the rows of q, [row][d / 4], zeros past Lq and D
var<workgroup> ps: array<f32, R * 64u>;  // the tile's scores, then probabilities, [row][key]
var<workgroup> kcount_shared: u32;

{{BASES}}
// load_x(i, n): n (1 to 4) elements of x from element i on, along its head dimension.
{{LOADS}}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
    let id = wid.x + wid.y * nwg.x;
    if (id >= params.groups) { return; }
    let c = id % params.chunks;
    let bi = (id / params.chunks) % params.batch;
    let rb = id / params.chunks / params.batch;
    let bases = view_bases(bi);
    let q_base = bases.x;
    let k_base = bases.y;
    let v_base = bases.z;
    let i0 = rb * R;
    let ninf = bitcast<f32>(params.neg_inf_bits);
    let off = i32(params.lk) - i32(params.lq);
    for (var u = tid; u < R * DQ / 4u; u = u + 64u) {
        let r = u / (DQ / 4u);
        let d = (u % (DQ / 4u)) * 4u;
        var x = vec4<f32>(0.0);
        if (i0 + r < params.lq) {
            x = load_q(q_base + (i0 + r) * u32(params.q_sr) + d * u32(params.q_sd), min(4u, D - d));
        }
        qs[u] = select(vec4<f32>(0.0), x, vec4<u32>(d) + vec4<u32>(0u, 1u, 2u, 3u) < vec4<u32>(D));
    }
    if (tid == 0u) {
        var n = params.lk;
{{COUNT_LOAD}}
        kcount_shared = n;
    }
    let valid = workgroupUniformLoad(&kcount_shared);
    let k_start = c * params.chunk_keys;
    let k_end = min(min(k_start + params.chunk_keys, params.lk), valid);
    var m: array<f32, R>;
    var l: array<f32, R>;
    var o: array<f32, R * NV>;
    for (var r = 0u; r < R; r = r + 1u) { m[r] = ninf; l[r] = 0.0; }
    for (var i = 0u; i < R * NV; i = i + 1u) { o[i] = 0.0; }
    for (var k0 = k_start; k0 < k_end; k0 = k0 + 64u) {
        // Scores of key k0 + tid, -inf where masked.
        let key = k0 + tid;
        var s: array<f32, R>;
        for (var r = 0u; r < R; r = r + 1u) { s[r] = 0.0; }
        if (key < k_end) {
            let kb = k_base + key * u32(params.k_sr);
            for (var d = 0u; d < D; d = d + 4u) {
                let kv = load_k(kb + d * u32(params.k_sd), min(4u, D - d));
                for (var r = 0u; r < R; r = r + 1u) {
                    s[r] = s[r] + dot(qs[r * (DQ / 4u) + d / 4u], kv);
                }
            }
        }
        for (var r = 0u; r < R; r = r + 1u) {
            var keep = key < k_end;
            if (params.causal != 0u) { keep = keep && i32(key) <= i32(i0 + r) + off; }
            ps[r * 64u + tid] = select(ninf, s[r] * params.scale_log2, keep);
        }
        workgroupBarrier();
        // The rows' new maxima, and the factors for what was summed against the old ones.
        var al: array<f32, R>;
        for (var r = 0u; r < R; r = r + 1u) {
            var mx = m[r];
            for (var j = 0u; j < 64u; j = j + 1u) { mx = max(mx, ps[r * 64u + j]); }
            al[r] = select(1.0, exp2(m[r] - mx), mx > ninf);
            m[r] = mx;
        }
        workgroupBarrier();
        for (var r = 0u; r < R; r = r + 1u) {
            let sv = ps[r * 64u + tid];
            ps[r * 64u + tid] = select(0.0, exp2(sv - m[r]), sv > ninf);
        }
        workgroupBarrier();
        for (var r = 0u; r < R; r = r + 1u) {
            l[r] = l[r] * al[r];
            for (var cc = 0u; cc < NV; cc = cc + 1u) { o[r * NV + cc] = o[r * NV + cc] * al[r]; }
        }
        let keys = min(64u, k_end - k0);
        for (var j = 0u; j < keys; j = j + 1u) {
            let vb = v_base + (k0 + j) * u32(params.v_sr);
            for (var cc = 0u; cc < NV; cc = cc + 1u) {
                let col = tid + 64u * cc;
                if (col < DV) {
                    let x = load_v(vb + col * u32(params.v_sd), 1u).x;
                    for (var r = 0u; r < R; r = r + 1u) { o[r * NV + cc] = fma(ps[r * 64u + j], x, o[r * NV + cc]); }
                }
            }
            for (var r = 0u; r < R; r = r + 1u) { l[r] = l[r] + ps[r * 64u + j]; }
        }
        workgroupBarrier();
    }
    for (var r = 0u; r < R; r = r + 1u) {
        let row = i0 + r;
        if (row < params.lq) {
            let at = ((bi * params.lq + row) * params.chunks + c) * (DV + 2u);
            if (tid == 0u) {
                part[at] = m[r];
                part[at + 1u] = l[r];
            }
            for (var cc = 0u; cc < NV; cc = cc + 1u) {
                let col = tid + 64u * cc;
                if (col < DV) { part[at + 2u + col] = o[r * NV + cc]; }
            }
        }
    }
}
