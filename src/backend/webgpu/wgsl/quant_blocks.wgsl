// Reading q8_0 and q4_0 blocks from storage words (prepended to the quant kernels). A device
// buffer holds the blocks split in two (core/block_layout.c): every block's values first, 32
// bytes (q8_0) or 16 (q4_0) a block, then every block's f16 scale, 2 bytes a block, from u32
// word params.scales. Block b's values are words VALUE_WORDS b .. and its scale the low (b
// even) or high half of word params.scales + b / 2. Q8 is a constant of the kernel.

const Q8: bool = {{Q8}};
const VALUE_WORDS: u32 = select(4u, 8u, Q8); // words of values per block

// The f16 scale of block b as f32.
fn block_scale(b: u32) -> f32 {
    let word = wq[params.scales + b / 2u] >> ((b & 1u) * 16u);
    return unpack2x16float(word & 0xffffu).x;
}

// Word k of block b's values (bytes 4k..4k+3 of its values).
fn block_word(b: u32, k: u32) -> u32 { return wq[b * VALUE_WORDS + k]; }

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
