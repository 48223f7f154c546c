// Reading ggml's q8_0 and q4_0 blocks from storage words (prepended to the quant kernels).
// The storage keeps ggml's byte layout exactly: blocks of 34 (q8_0) or 18 (q4_0) bytes, an
// f16 scale d then the values, packed back to back with no padding, so a block starts at an
// even byte that is a multiple of 4 only for every other block. The kernels read whole words
// and shift: a block's values start 2 bytes past a word boundary or on one, and four values
// are assembled from the two words they straddle. Q8 is a constant of the kernel.

const Q8: bool = {{Q8}};
const BLOCK_BYTES: u32 = select(18u, 34u, Q8);
const VALUE_WORDS: u32 = select(4u, 8u, Q8); // words of values per block

// The f16 scale of block b as f32.
fn block_scale(b: u32) -> f32 {
    let at = b * BLOCK_BYTES;
    let word = wq[at >> 2u] >> ((at & 2u) * 8u);
    return unpack2x16float(word & 0xffffu).x;
}

// Word k of block b's values (bytes 4k..4k+3 of its values).
fn block_word(b: u32, k: u32) -> u32 {
    let at = b * BLOCK_BYTES + 2u + 4u * k;
    let i = at >> 2u;
    if ((at & 2u) == 0u) { return wq[i]; }
    return (wq[i] >> 16u) | (wq[i + 1u] << 16u);
}

// Byte j (0..3) of a word as a signed value.
fn signed_byte(w: u32, j: u32) -> f32 { return f32(bitcast<i32>(w << (24u - 8u * j)) >> 24u); }

// The 32 values of block b (q4_0 already less 8), before scaling, into vals.
fn block_values(b: u32, vals: ptr<function, array<f32, 32>>) {
    for (var k = 0u; k < VALUE_WORDS; k = k + 1u) {
        let w = block_word(b, k);
        for (var j = 0u; j < 4u; j = j + 1u) {
            if (Q8) {
                (*vals)[4u * k + j] = signed_byte(w, j);
            } else {
                let byte = (w >> (8u * j)) & 0xffu;
                (*vals)[4u * k + j] = f32(i32(byte & 0xfu) - 8);
                (*vals)[4u * k + j + 16u] = f32(i32(byte >> 4u) - 8);
            }
        }
    }
}
