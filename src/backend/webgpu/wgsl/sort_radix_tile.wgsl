// The parameters and tiles of one LSD radix pass, pasted into sort_radix_hist and
// sort_radix_scatter: workgroup g takes tile g % tiles of row g / tiles, TILE pairs from
// base (the last tile of a row may be short).

struct Params {
    rows: u32,
    n: u32,       // row length
    tiles: u32,   // tiles per row
    shift: u32,   // the digit is (key >> shift) & 255
    stride: u32,  // pair i's key is keys[i * stride] (1: sort_init's keys; 2: pairs)
    pos_at: u32,  // scatter: its position is pos_in[pos_at + i * stride]
    _pad0: u32,
    _pad1: u32,
};

const TILE: u32 = 4096u;

struct Tile {
    row: u32,
    index: u32,  // within the row
    len: u32,
    base: u32,   // its first pair
};

fn tile_at(g: u32) -> Tile {
    let row = g / params.tiles;
    let index = g - row * params.tiles;
    let start = index * TILE;
    return Tile(row, index, min(TILE, params.n - start), row * params.n + start);
}
