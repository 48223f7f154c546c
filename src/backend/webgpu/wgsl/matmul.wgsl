// Matrix multiplication: out [batch, M, N] (contiguous) = a [batch, M, K] @ b [batch, K, N],
// with a and b read in place through their strides (transposed, sliced and broadcast views
// alike). Five kernels share this file; the host names the one it runs `main` and fills in
// the constants and generated statements of that variant:
//
// tiled: a workgroup of T_TX x T_TY invocations computes a T_BM x T_BN tile (64 or 128 on
//   each side) of one output matrix, in 4 x 4 blocks per invocation spaced 4 T_TY rows and
//   4 T_TX columns apart; a warp covers 8 x 4 neighbouring blocks, so its reads of a staged
//   tile are vec4s within 128 bytes. K advances T_BK at a time through one workgroup
//   buffer per operand: the next step's loads are issued into registers during or before
//   the multiply of the staged step (in the order the host generates), and stored after
//   it, between two barriers; each pass of the loop takes T_UNROLL steps.
//   How each operand is fetched is its mode: along its row (column) dimension or along K,
//   whichever has stride 1, as vec4 loads when the host has checked the alignment, else as
//   single elements; it is staged along M (N) or along K as the host chooses (A_STAGE, B_STAGE).
//   The multiply is generated unrolled over k, so every staged read has constant indices
//   apart from a part that is the same in every step (bounds clamps computed once). Tiles
//   are walked in bands of GROUP_M tile rows so that workgroups running together share rows
//   of a and columns of b in the cache. With `chunks` > 1
//   the workgroup sums only K range `chunk` and writes an f32 partial result. With
//   T_SLICES > 1 the workgroup is that many such sets of invocations, each taking every
//   T_SLICES-th step of the range into its own staged tiles and accumulators; the first
//   adds the others' accumulators to its own before it writes.
// rows: for few rows of a: a workgroup takes R_ROWS rows (up to 16) and R_CW R_COLS columns
//   over one range of K; its 256 invocations are R_COLS column groups by R_LANES lanes of K.
//   Rows of a are staged in workgroup memory R_KS values of K at a time (a single row is
//   read from memory in the loop instead, R_DIRECT) and every invocation streams b, 16
//   bytes per load where the layout allows (R_MODE), R_UNROLL steps of loads in flight,
//   into R_ROWS vec4 accumulators per 4 columns; the lanes then meet through workgroup
//   memory in a fixed order. It writes the result (f32, or f16 words of two neighbouring
//   columns), or one K range's f32 partial result. Where the host launches fewer workgroups
//   than there are such tiles, each workgroup takes every so many tiles in turn.
// sum: adds the `chunks` partial results of the two kernels above in order and writes the
//   output (f32, or f16 a whole word of two outputs per invocation, over the flat index).
// fix: after a streamed tiled kernel, adds the parts of each split tile from `part` to out.
// pack: before the tiled kernel, copies an f32 operand (a, or b where PACK_B) into out as K
//   lines of its M (N) values, each line padded with zeros to a multiple of 32 (128 bytes,
//   so that a tile's line starts a cache line), which the tiled kernel fetches as vec4s
//   along M (N) whatever the operand's own layout.
//
// Workgroups are numbered in a 2-D grid (65535 per dimension) and the number is split into
// chunk, batch element and tile, so any batch count fits. f16 is stored packed two per u32
// and unpacked on load; all arithmetic is f32. An f16 output is written a whole u32 word per
// invocation: the tiled and rows kernels' columns start at an even index, and the host sends
// odd N through f32 partials and the sum kernel.

struct Params {
    M: u32,
    N: u32,
    K: u32,
    batch: u32,          // product of the batch dimensions
    tiles_m: u32,        // tiled: tiles per column, per row; rows: row blocks, column blocks
    tiles_n: u32,
    batch_ndim: u32,
    _pad0: u32,
    a_offset: u32,       // element offsets of the views
    b_offset: u32,
    chunks: u32,         // tiled, rows, sum: ranges K is split into (partials when > 1)
    kchunk: u32,         // values of K per range
    a_sm: i32,           // strides of the matrix dimensions, in elements
    a_sk: i32,
    b_sk: i32,
    b_sn: i32,
    _pad1: u32,
    total: u32,          // batch * M * N
    a_k_fast: u32,       // rows: stage a with neighbouring invocations along K
    _pad2: u32,
    batch_shape: array<vec4<u32>, 2>,
    a_batch: array<vec4<i32>, 2>,  // strides of the batch dimensions (0 where broadcast)
    b_batch: array<vec4<i32>, 2>,
    // tiled when streamed, and fix: whole tiles (one workgroup each), then passes per stream
    // workgroup and how many of them take one more, passes per tile (see stream_start)
    stream: vec4<u32>,
};

@group(0) @binding(0) var<storage, read> a: array<{{A_STORAGE}}>;
@group(0) @binding(1) var<storage, read> b: array<{{B_STORAGE}}>;
@group(0) @binding(2) var<storage, read_write> out: array<{{OUT_STORAGE}}>;
{{PART_BINDING}}
@group(0) @binding({{PARAMS_BINDING}}) var<uniform> params: Params;

const WG: u32 = 256u;

// One element (f32) of a or b at element index i, and four from i on (i a multiple of 4).
fn load_a(i: u32) -> f32 {
    {{LOAD_A}}
}
fn load4_a(i: u32) -> vec4<f32> {
    {{LOAD4_A}}
}
fn load_b(i: u32) -> f32 {
    {{LOAD_B}}
}
fn load4_b(i: u32) -> vec4<f32> {
    {{LOAD4_B}}
}

// Writes output i (f32 outputs; the f16 form is never run, the kernels write f16 words).
fn put(i: u32, v: f32) {
    {{PUT}}
}

// Writes word i of an f16 output, two outputs (the f32 form is never run).
fn put_word(i: u32, v: u32) {
    {{PUT_WORD}}
}

// f32 to f16 bits, rounding to nearest; NaN, infinity and overflow are handled here
// because pack2x16float leaves values outside the f16 range indeterminate.
fn f16_bits(x: f32) -> u32 {
    let bits = bitcast<u32>(x);
    if ((bits & 0x7fffffffu) > 0x7f800000u) { return 0x7e00u; }
    if (abs(x) >= 65520.0) { return ((bits >> 16u) & 0x8000u) | 0x7c00u; }
    return pack2x16float(vec2<f32>(x, 0.0)) & 0xffffu;
}

// Storage indices of the first element of batch element `batch` in a (x) and b (y).
fn batch_bases(batch: u32) -> vec2<i32> {
    var rem = batch;
    var ia = i32(params.a_offset);
    var ib = i32(params.b_offset);
    for (var d = i32(params.batch_ndim) - 1; d >= 0; d = d - 1) {
        let n = params.batch_shape[d / 4][d % 4];
        let i = i32(rem % n);
        rem = rem / n;
        ia = ia + i * params.a_batch[d / 4][d % 4];
        ib = ib + i * params.b_batch[d / 4][d % 4];
    }
    return vec2<i32>(ia, ib);
}

// ---- tiled kernel ---------------------------------------------------------------------

const T_BM: u32 = {{T_BM}}u;
const T_BN: u32 = {{T_BN}}u;
const T_BK: u32 = {{T_BK}}u;
const T_KV: u32 = T_BK / 4u;  // vec4s of K per staged row
// 0: vec4 along M (N), 1: vec4 along K, 2: single elements along M (N), 3: along K.
const A_MODE: u32 = {{A_MODE}}u;
const B_MODE: u32 = {{B_MODE}}u;
// Staged layout of each operand: 0 [k][m / 4] (vec4s along M), 1 [m / 4][i * T_KV + k / 4]
// (vec4s along K; four rows m = 4 (m / 4) + i to a padded line). The host matches the layout
// to the fetch, so stores are whole vec4s, except where it chooses otherwise.
const A_STAGE: u32 = {{A_STAGE}}u;
const B_STAGE: u32 = {{B_STAGE}}u;
// Invocations: T_TX (a multiple of 8; 16 for every tile the host picks) across the tile's
// columns by T_TY down its rows.
const T_TX: u32 = {{T_TX}}u;
const T_TY: u32 = {{T_TY}}u;
const T_WG: u32 = T_TX * T_TY;
// Slices of K per workgroup: slice sl of T_WG invocations takes steps sl, sl + T_SLICES, ...
// into its own staged tiles and accumulators, which the slices add up at the end (through
// tsum) before the first writes them. More invocations per tile where tiles are too few,
// without a second kernel and a buffer of partial results.
const T_SLICES: u32 = {{T_SLICES}}u;
const A_LOADS: u32 = T_BK * T_BM / (4u * T_WG);  // vec4s each invocation fetches per step
const B_LOADS: u32 = T_BK * T_BN / (4u * T_WG);
const GROUP_M: u32 = 8u;
const T_UNROLL: u32 = {{T_UNROLL}}u;

// The staged step of each operand, in the layout above (one per slice).
var<workgroup> ta: {{A_TILE}};
var<workgroup> tb: {{B_TILE}};
var<workgroup> tsum: array<vec4<f32>, {{T_SUM}}>;

// Fetch q (0 .. T_BK * T_BM / 4 - 1) of a's tile at (m0, k0): four values of one k along M,
// or of one row along K; zeros past M and past ke.
fn fetch_a(q: u32, base: i32, m0: u32, k0: u32, ke: u32) -> vec4<f32> {
    var v = vec4<f32>(0.0);
    if ((A_MODE & 1u) == 0u) {
        let m = m0 + 4u * (q % (T_BM / 4u));
        let k = k0 + q / (T_BM / 4u);
        if (k < ke) {
            let at = base + i32(k) * params.a_sk + i32(m) * params.a_sm;
            if (A_MODE == 0u) {
                if (m < params.M) { v = load4_a(u32(at)); }
            } else {
                if (m < params.M) { v.x = load_a(u32(at)); }
                if (m + 1u < params.M) { v.y = load_a(u32(at + params.a_sm)); }
                if (m + 2u < params.M) { v.z = load_a(u32(at + 2 * params.a_sm)); }
                if (m + 3u < params.M) { v.w = load_a(u32(at + 3 * params.a_sm)); }
            }
        }
    } else {
        let k = k0 + 4u * (q % T_KV);
        let m = m0 + q / T_KV;
        if (m < params.M) {
            let at = base + i32(m) * params.a_sm + i32(k) * params.a_sk;
            if (A_MODE == 1u) {
                if (k < ke) { v = load4_a(u32(at)); }
            } else {
                if (k < ke) { v.x = load_a(u32(at)); }
                if (k + 1u < ke) { v.y = load_a(u32(at + params.a_sk)); }
                if (k + 2u < ke) { v.z = load_a(u32(at + 2 * params.a_sk)); }
                if (k + 3u < ke) { v.w = load_a(u32(at + 3 * params.a_sk)); }
            }
        }
    }
    return v;
}

fn fetch_b(q: u32, base: i32, n0: u32, k0: u32, ke: u32) -> vec4<f32> {
    var v = vec4<f32>(0.0);
    if ((B_MODE & 1u) == 0u) {
        let n = n0 + 4u * (q % (T_BN / 4u));
        let k = k0 + q / (T_BN / 4u);
        if (k < ke) {
            let at = base + i32(k) * params.b_sk + i32(n) * params.b_sn;
            if (B_MODE == 0u) {
                if (n < params.N) { v = load4_b(u32(at)); }
            } else {
                if (n < params.N) { v.x = load_b(u32(at)); }
                if (n + 1u < params.N) { v.y = load_b(u32(at + params.b_sn)); }
                if (n + 2u < params.N) { v.z = load_b(u32(at + 2 * params.b_sn)); }
                if (n + 3u < params.N) { v.w = load_b(u32(at + 3 * params.b_sn)); }
            }
        }
    } else {
        let k = k0 + 4u * (q % T_KV);
        let n = n0 + q / T_KV;
        if (n < params.N) {
            let at = base + i32(n) * params.b_sn + i32(k) * params.b_sk;
            if (B_MODE == 1u) {
                if (k < ke) { v = load4_b(u32(at)); }
            } else {
                if (k < ke) { v.x = load_b(u32(at)); }
                if (k + 1u < ke) { v.y = load_b(u32(at + params.b_sk)); }
                if (k + 2u < ke) { v.z = load_b(u32(at + 2 * params.b_sk)); }
                if (k + 3u < ke) { v.w = load_b(u32(at + 3 * params.b_sk)); }
            }
        }
    }
    return v;
}

// Stores fetch q into slice sl's staged tile: a whole vec4 where the fetch runs the way the
// layout does, else one value per row (layout 1) or per k (layout 0). Where the workgroup has
// several slices, ta and tb hold a tile per slice and are indexed by sl first.
fn stash_a(sl: u32, q: u32, v: vec4<f32>) {
    if ((A_MODE & 1u) == 0u) {
        let m = 4u * (q % (T_BM / 4u));
        let k = q / (T_BM / 4u);
        if (A_STAGE == 0u) {
            ta{{TS}}[k][m / 4u] = v;
        } else {
            let line = k / 4u;
            let c = k % 4u;
            ta{{TS}}[m / 4u][line][c] = v.x;
            ta{{TS}}[m / 4u][T_KV + line][c] = v.y;
            ta{{TS}}[m / 4u][2u * T_KV + line][c] = v.z;
            ta{{TS}}[m / 4u][3u * T_KV + line][c] = v.w;
        }
    } else {
        let m = q / T_KV;
        let kv = q % T_KV;
        if (A_STAGE == 1u) {
            ta{{TS}}[m / 4u][(m % 4u) * T_KV + kv] = v;
        } else {
            let c = m % 4u;
            ta{{TS}}[4u * kv][m / 4u][c] = v.x;
            ta{{TS}}[4u * kv + 1u][m / 4u][c] = v.y;
            ta{{TS}}[4u * kv + 2u][m / 4u][c] = v.z;
            ta{{TS}}[4u * kv + 3u][m / 4u][c] = v.w;
        }
    }
}

fn stash_b(sl: u32, q: u32, v: vec4<f32>) {
    if ((B_MODE & 1u) == 0u) {
        let n = 4u * (q % (T_BN / 4u));
        let k = q / (T_BN / 4u);
        if (B_STAGE == 0u) {
            tb{{TS}}[k][n / 4u] = v;
        } else {
            let line = k / 4u;
            let c = k % 4u;
            tb{{TS}}[n / 4u][line][c] = v.x;
            tb{{TS}}[n / 4u][T_KV + line][c] = v.y;
            tb{{TS}}[n / 4u][2u * T_KV + line][c] = v.z;
            tb{{TS}}[n / 4u][3u * T_KV + line][c] = v.w;
        }
    } else {
        let n = q / T_KV;
        let kv = q % T_KV;
        if (B_STAGE == 1u) {
            tb{{TS}}[n / 4u][(n % 4u) * T_KV + kv] = v;
        } else {
            let c = n % 4u;
            tb{{TS}}[4u * kv][n / 4u][c] = v.x;
            tb{{TS}}[4u * kv + 1u][n / 4u][c] = v.y;
            tb{{TS}}[4u * kv + 2u][n / 4u][c] = v.z;
            tb{{TS}}[4u * kv + 3u][n / 4u][c] = v.w;
        }
    }
}

// Writes up to 4 outputs of one row: flat index base + n, ..., columns n.. below N.
fn store4(base: u32, n: u32, v: vec4<f32>) {
    {{STORE4}}
}

// Adds v to up to 4 outputs of one row as store4 numbers them (the fix kernel; f32 outputs).
fn add4(base: u32, n: u32, v: vec4<f32>) {
    {{ADD4}}
}

// The first pass of stream workgroup s (the workgroups after the whole tiles), where tile t's
// passes over K are t P .. t P + P - 1 (P = params.stream.w): the passes after the whole
// tiles' are shared out evenly, the first params.stream.z workgroups taking one more. A run
// may be shorter than a tile (fewer tiles than the device has slots) or longer.
fn stream_start(s: u32) -> u32 {
    return params.stream.x * params.stream.w + s * params.stream.y + min(s, params.stream.z);
}

// The stream workgroup whose run holds pass `pos` (one after the whole tiles'): the inverse of
// stream_start. The host makes every run at least one pass long.
fn stream_run(pos: u32) -> u32 {
    let r = pos - params.stream.x * params.stream.w;
    let long_runs = params.stream.z * (params.stream.y + 1u);
    if (r < long_runs) { return r / (params.stream.y + 1u); }
    return params.stream.z + (r - long_runs) / params.stream.y;
}

// First row and column of tile `tile` of a batch element. Tiles are walked in bands of GROUP_M
// tile rows so that workgroups running together share rows of a and columns of b in the cache.
fn tile_origin(tile: u32) -> vec2<u32> {
    let band = GROUP_M * params.tiles_n;
    let first_m = (tile / band) * GROUP_M;
    let band_rows = min(params.tiles_m - first_m, GROUP_M);
    let in_band = tile % band;
    return vec2<u32>((first_m + in_band % band_rows) * T_BM, (in_band / band_rows) * T_BN);
}

// Each invocation computes 4 x 4 blocks of outputs: rows m0 + 64 g + 4 ty + i, columns
// n0 + 64 h + 4 tx + j. The generated step reads the staged tiles with constant indices for
// k and for the row within a block, so the only varying parts of an index (ty + 16 g,
// tx + 16 h) are the same in every step: the bounds clamps WGSL requires on
// workgroup arrays are computed once, and each read is a base register plus a constant.
@compute @workgroup_size(T_WG * T_SLICES)
fn {{TILED_ENTRY}}(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) groups: vec3<u32>) {
{{SLICE_OF}}
    let group = wid.x + wid.y * groups.x;
    let per_batch = params.tiles_m * params.tiles_n;
    let per_chunk = per_batch * params.batch;
    // A warp (32 invocations) covers 8 column blocks by 4 row blocks, so each of its reads of
    // a staged tile touches at most 128 bytes.
    let warp = tid / 32u;
    let lane = tid % 32u;
    let tx = (warp % (T_TX / 8u)) * 8u + lane % 8u;
    let ty = (warp / (T_TX / 8u)) * 4u + lane / 8u;
    // The work (the host generates this part): range `chunk` of K of tile `rest` (counting
    // through the batch), K from kb to ke, in a block; streamed, a loop over the parts of the
    // run of passes (chunk 0).
{{PART_OPEN}}
        let batch = rest / per_batch;
        let tile = rest - batch * per_batch;
        let origin = tile_origin(tile);
        let m0 = origin.x;
        let n0 = origin.y;
        let bases = batch_bases(batch);
        // Steps per slice, the same for every slice (barriers stay uniform) and a multiple of
        // T_UNROLL; a slice's step past ke fetches zeros, and multiplies them.
        let steps = (ke - kb + T_BK * T_SLICES * T_UNROLL - 1u) / (T_BK * T_SLICES * T_UNROLL) * T_UNROLL;
        let k0 = kb + sl * T_BK;
        let in_range = m0 + 4u * ty < params.M && n0 + 4u * tx < params.N;
{{ACC_DECL}}
{{FIRST_FETCH}}
        workgroupBarrier();
        for (var s0 = 0u; s0 < steps; s0 = s0 + T_UNROLL) {
{{STEP}}
        }
{{ACC_MERGE}}
        // The stores (the host generates them): to out where the tile (or range of K) is
        // whole, else streamed, a part where the run ends inside the tile to `part`; then the
        // run's next part, if any. The last step ended on a barrier after every read of the
        // staged tiles, so the next part may stage its first step at once.
{{PART_CLOSE}}
}

// ---- rows kernel ----------------------------------------------------------------------

const R_ROWS: u32 = {{R_ROWS}}u;    // rows of a per workgroup: 1, 2, 4, 8 or 16
const R_AP: u32 = {{R_AP}}u;        // floats per staged k (R_ROWS, padded where lanes differ in k)
const R_KS: u32 = {{R_KS}}u;        // values of K staged at a time
const R_LANES: u32 = {{R_LANES}}u;  // invocations along K (8, 16 or 32)
const R_COLS: u32 = WG / R_LANES;   // column groups: the workgroup has R_CW R_COLS columns
// 0: vec4 of b along N (columns n0 + 4 c ..), 1: single elements (columns n0 + c + R_COLS j),
// 2: as 1 with the lanes of K side by side (b stored along K), 3: as 0 with 8 f16 columns
// (n0 + 8 c ..) per 16-byte load, 4: as 2 with R_KW values of K per 16-byte load.
const R_MODE: u32 = {{R_MODE}}u;
const R_RG: u32 = {{R_RG}}u;        // rows reduced per round (R_RG x R_OUT R_COLS <= 256)
const R_KW: u32 = {{R_KW}}u;        // values of K a lane takes at a time (1; 4 or 8 in mode 4)
const R_CW: u32 = {{R_CW}}u;        // columns per invocation (4; 8 in mode 3; 1, 2 or 4 in mode 4)
const R_OUT: u32 = {{R_OUT}}u;      // columns per invocation in each accumulator (R_CW in mode 4, else 4)
const R_DIRECT: u32 = {{R_DIRECT}}u;  // 1: a's one row is read in the loop, not staged
const R_F16: u32 = {{R_F16}}u;      // 1: the output is f16, written here a word at a time

var<workgroup> shm: array<vec4<f32>, 1024>;

// Raw f16 words of 8 values of a from element i (a multiple of 8; f16 bound as vec4<u32>).
fn load8_a(i: u32) -> vec4<u32> {
    {{LOAD8_A}}
}

// Raw f16 words of 8 values of b from element i (a multiple of 8; f16 bound as vec4<u32>).
fn load8_b(i: u32) -> vec4<u32> {
    {{LOAD8_B}}
}

// Columns n0 + 4 c .. + 3 (mode 0) or n0 + c + R_COLS j (j = 0 .. 3) of b's row k.
fn rows_b(base: i32, k: u32, n0: u32, c: u32) -> vec4<f32> {
    var v = vec4<f32>(0.0);
    let row = base + i32(k) * params.b_sk;
    if (R_MODE == 0u) {
        let n = n0 + 4u * c;
        if (n < params.N) { v = load4_b(u32(row + i32(n))); }
    } else {
        let n = n0 + c;
        let at = row + i32(n) * params.b_sn;
        let step = i32(R_COLS) * params.b_sn;
        if (n < params.N) { v.x = load_b(u32(at)); }
        if (n + R_COLS < params.N) { v.y = load_b(u32(at + step)); }
        if (n + 2u * R_COLS < params.N) { v.z = load_b(u32(at + 2 * step)); }
        if (n + 3u * R_COLS < params.N) { v.w = load_b(u32(at + 3 * step)); }
    }
    return v;
}

// Mode 3: columns n0 + 8 c .. + 7 of b's row k, as f16 words.
fn rows_b8(base: i32, k: u32, n0: u32, c: u32) -> vec4<u32> {
    var v = vec4<u32>(0u);
    let n = n0 + 8u * c;
    if (n < params.N) { v = load8_b(u32(base + i32(k) * params.b_sk + i32(n))); }
    return v;
}

// Mode 4: values k .. k + R_KW - 1 of column n0 + c + R_COLS j (b stored by columns).
fn rows_bk4(base: i32, k: u32, n0: u32, c: u32, j: u32) -> vec4<f32> {
    var v = vec4<f32>(0.0);
    let n = n0 + c + R_COLS * j;
    if (n < params.N) { v = load4_b(u32(base + i32(n) * params.b_sn + i32(k))); }
    return v;
}

fn rows_bk8(base: i32, k: u32, n0: u32, c: u32, j: u32) -> vec4<u32> {
    var v = vec4<u32>(0u);
    let n = n0 + c + R_COLS * j;
    if (n < params.N) { v = load8_b(u32(base + i32(n) * params.b_sn + i32(k))); }
    return v;
}

// The sum over the lanes of staged row rr's column col (as rows_emit numbers columns).
fn rows_lane_sum(rr: u32, col: u32) -> f32 {
    var c = col % R_COLS;
    var j = col / R_COLS;
    if (R_MODE == 0u || R_MODE == 3u) {
        c = col / 4u;
        j = col % 4u;
    }
    var s = 0.0;
    for (var l = 0u; l < R_LANES; l = l + 1u) {
        var t = l * R_COLS + c;
        if (R_MODE == 2u || R_MODE == 4u) { t = c * R_LANES + l; }
        s = s + shm[rr * WG + t][j];
    }
    return s;
}

// Output column of the staged accumulators' column col: n0 + col, except in mode 3, where
// col holds columns 4 half .. 4 half + 3 of each 8. An even col and the next one are
// neighbouring columns in every mode.
fn rows_column(n0: u32, col: u32, half: u32) -> u32 {
    if (R_MODE == 3u) { return n0 + 8u * (col / 4u) + 4u * half + col % 4u; }
    return n0 + col;
}

// Sums the lanes of rows first .. first + R_RG - 1 (staged in shm as [row][invocation]) and
// writes them: f32 outputs one per invocation (row tid / (4 R_COLS), column tid % (4 R_COLS)
// of the staged accumulators), f16 outputs a word of two neighbouring columns per invocation
// (the host sends only even N and one range of K here, so every word is whole).
fn rows_emit(tid: u32, first: u32, row0: u32, n0: u32, obase: u32, half: u32) {
    if (R_F16 == 0u) {
        let rr = tid / (R_OUT * R_COLS);
        let col = tid % (R_OUT * R_COLS);
        let row = row0 + first + rr;
        let n = rows_column(n0, col, half);
        if (rr < R_RG && row < params.M && n < params.N) { put(obase + row * params.N + n, rows_lane_sum(rr, col)); }
    } else {
        let rr = tid / (R_OUT * R_COLS / 2u);
        let col = 2u * (tid % (R_OUT * R_COLS / 2u));
        let row = row0 + first + rr;
        let n = rows_column(n0, col, half);
        if (rr < R_RG && row < params.M && n < params.N) {
            let lo = f16_bits(rows_lane_sum(rr, col));
            let hi = f16_bits(rows_lane_sum(rr, col + 1u));
            put_word((obase + row * params.N + n) / 2u, lo | (hi << 16u));
        }
    }
}

@compute @workgroup_size(256)
fn {{ROWS_ENTRY}}(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) groups: vec3<u32>) {
    let per_batch = params.tiles_m * params.tiles_n;
    let per_chunk = per_batch * params.batch;
{{ROWS_OPEN}}  // opens the block of one tile's work (in turn where the host asks)
    let chunk = group / per_chunk;
    let rest = group - chunk * per_chunk;
    let batch = rest / per_batch;
    let tile = rest - batch * per_batch;
    let row0 = (tile / params.tiles_n) * R_ROWS;
    let n0 = (tile % params.tiles_n) * (R_CW * R_COLS);
    let bases = batch_bases(batch);
    let kb = chunk * params.kchunk;
    let ke = min(params.K, kb + params.kchunk);
    var c = tid % R_COLS;
    var lane = tid / R_COLS;
    if (R_MODE == 2u || R_MODE == 4u) {
        c = tid / R_LANES;
        lane = tid % R_LANES;
    }
{{ROWS_DECL}}
    for (var ks = kb; ks < ke; ks = ks + R_KS) {
        let kn = min(R_KS, ke - ks);
        for (var q = tid; R_DIRECT == 0u && q < R_KS * R_ROWS; q = q + WG) {
            var r = q % R_ROWS;
            var kl = q / R_ROWS;
            if (params.a_k_fast != 0u) {
                r = q / R_KS;
                kl = q % R_KS;
            }
            var v = 0.0;
            if (kl < kn && row0 + r < params.M) {
                v = load_a(u32(bases.x + i32(row0 + r) * params.a_sm + i32(ks + kl) * params.a_sk));
            }
            // [k][row] for one value of k at a time, [row][k] for R_KW of them (mode 4).
            var s = kl * R_AP + r;
            if (R_MODE == 4u) { s = r * R_KS + kl; }
            shm[s / 4u][s % 4u] = v;
        }
        workgroupBarrier();
        // The host makes kn a multiple of R_KW, so a lane's values never cross it.
        var kl = lane * R_KW;
{{ROWS_LOOP}}
        workgroupBarrier();
    }
    let obase = chunk * params.total + batch * params.M * params.N;
{{ROWS_REDUCE}}
    }
}

// ---- sum kernel -----------------------------------------------------------------------

@compute @workgroup_size(256)
fn {{SUM_ENTRY}}(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) groups: vec3<u32>) {
    let i = (wid.x + wid.y * groups.x) * WG + tid;
    {{SUM_BODY}}
}

// ---- fix kernel -----------------------------------------------------------------------

// Workgroup t takes streamed tile t (counting after the whole tiles). A run that ends inside a
// tile wrote what it summed of that tile to its slot of `part` (bound here as a); the run
// holding the tile's last pass wrote its own sum to out. Each run ends inside at most one tile,
// so the runs that end inside tile t are consecutive, from the one holding its first pass to
// the one before the one holding its last; their parts are added to out in that order.
@compute @workgroup_size(256)
fn {{FIX_ENTRY}}(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) groups: vec3<u32>) {
    let rest = params.stream.x + wid.x + wid.y * groups.x;
    let per_batch = params.tiles_m * params.tiles_n;
    if (rest >= per_batch * params.batch) { return; }
    let first = stream_run(rest * params.stream.w);
    let last = stream_run(rest * params.stream.w + params.stream.w - 1u);
    if (first == last) { return; }  // one run took the whole tile
    let batch = rest / per_batch;
    let origin = tile_origin(rest - batch * per_batch);
    let obase = batch * params.M * params.N;
    for (var q = tid; q < T_BM * T_BN / 4u; q = q + WG) {
        let m = origin.x + q / (T_BN / 4u);
        let n = origin.y + 4u * (q % (T_BN / 4u));
        if (m < params.M && n < params.N) {
            var v = vec4<f32>(0.0);
            for (var s = first; s < last; s = s + 1u) { v = v + load4_a(4u * (s * (T_BM * T_BN / 4u) + q)); }
            add4(obase + m * params.N, n, v);
        }
    }
}

// ---- pack kernel ----------------------------------------------------------------------

const PACK_B: bool = {{PACK_B}};
// Lanes run along K where the operand has stride 1 along K, else along M (N): the reads of a
// warp are then one stretch of memory whichever way the operand is stored.
const PACK_READ_K: bool = {{PACK_READ_K}};
var<workgroup> pack_tile: array<f32, 1056>;  // 32 x 32 values, lines padded to 33 (banks)

// Workgroup g packs the 32 x 32 block (m0, k0): reads into pack_tile[m][k], then writes
// lines k of out, lanes along m, so that both the reads and the writes of a warp are whole
// stretches of memory.
@compute @workgroup_size(256)
fn {{PACK_ENTRY}}(@builtin(local_invocation_index) tid: u32, @builtin(workgroup_id) wid: vec3<u32>,
        @builtin(num_workgroups) groups: vec3<u32>) {
    let g = wid.x + wid.y * groups.x;
    let outer = select(params.M, params.N, PACK_B);
    let pitch = (outer + 31u) & ~31u;  // as the host's pack()
    let blocks_m = pitch / 32u;
    if (g >= blocks_m * ((params.K + 31u) / 32u)) { return; }
    let m0 = (g % blocks_m) * 32u;
    let k0 = (g / blocks_m) * 32u;
    let s_m = select(params.a_sm, params.b_sn, PACK_B);
    let s_k = select(params.a_sk, params.b_sk, PACK_B);
    let base = i32(select(params.a_offset, params.b_offset, PACK_B));
    let x = tid % 32u;
    let y = tid / 32u;
    for (var i = 0u; i < 4u; i = i + 1u) {
        var mi = y + 8u * i;
        var ki = x;
        if (!PACK_READ_K) { mi = x; ki = y + 8u * i; }
        let m = m0 + mi;
        let k = k0 + ki;
        var v = 0.0;
        if (m < outer && k < params.K) {
            let at = u32(base + i32(m) * s_m + i32(k) * s_k);
            if (PACK_B) { v = load_b(at); } else { v = load_a(at); }
        }
        pack_tile[mi * 33u + ki] = v;
    }
    workgroupBarrier();
    let m = m0 + x;
    for (var i = 0u; i < 4u; i = i + 1u) {
        let ki = y + 8u * i;
        let k = k0 + ki;
        if (m < pitch && k < params.K) { put(k * pitch + m, pack_tile[x * 33u + ki]); }
    }
}
