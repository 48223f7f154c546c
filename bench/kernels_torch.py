# PyTorch baselines of bench/kernels_bench.c's workloads, same machine, same run (CUDA events).
import json, torch
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
dev = "cuda"
def timed(f, reps=10):
    for _ in range(3): f()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(reps): f()
    e.record(); torch.cuda.synchronize()
    return s.elapsed_time(e) / reps
out = {}
g, big, n, r = 4096, 8192, 1 << 24, 4096
a, b = torch.randn(g, g, device=dev), torch.randn(g, g, device=dev)
ms = timed(lambda: a @ b); out["gemm_f32"] = (ms, 2 * g**3 / ms / 1e9)
a16, b16 = a.half(), b.half()
ms = timed(lambda: a16 @ b16); out["gemm_f16"] = (ms, 2 * g**3 / ms / 1e9)
A, B = torch.randn(big, big, device=dev, dtype=torch.half), torch.randn(big, big, device=dev, dtype=torch.half)
ms = timed(lambda: A @ B); out["gemm_f16_big"] = (ms, 2 * big**3 / ms / 1e9)
oa, ob = torch.randn(g - 96, g - 64, device=dev, dtype=torch.half), torch.randn(g - 64, g - 96, device=dev, dtype=torch.half)
ms = timed(lambda: oa @ ob); out["gemm_f16_odd"] = (ms, 2 * (g - 96)**2 * (g - 64) / ms / 1e9)
x, y, z = (torch.randn(n, device=dev) for _ in range(3))
ms = timed(lambda: torch.tanh(x * y + z) * x); out["chain_f32_eager"] = (ms, 16 * n / ms / 1e6)
m = torch.randn(r, r, device=dev)
ms = timed(lambda: m.sum(1)); out["sum_rows_f32"] = (ms, 4 * r * r / ms / 1e6)
ms = timed(lambda: torch.softmax(m, -1)); out["softmax_f32"] = (ms, 8 * r * r / ms / 1e6)
q, k, v = (torch.randn(1, 32, 2048, 128, device=dev) for _ in range(3))
ms = timed(lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.125))
out["attention_f32"] = (ms, 4 * 32 * 2048 * 2048 * 128 / 2 / ms / 1e9)
# f16 attention rows of kernels_bench.c: batch 8, 12 heads, default scale 1/sqrt(d).
for L in (1024, 4096):
    for d in (64, 128):
        q, k, v = (torch.randn(8, 12, L, d, device=dev, dtype=torch.half) for _ in range(3))
        for causal in (False, True):
            ms = timed(lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal))
            out[f"attn16_s{L}_d{d}" + ("_causal" if causal else "")] = (ms, 4 * 8 * 12 * L * L * d / (2 if causal else 1) / ms / 1e9)
        del q, k, v
for kname, (ms, rate) in out.items(): print(f"{kname:24s} {ms:9.3f} ms {rate:9.1f}")
print("torch", torch.__version__, torch.cuda.get_device_name(0))
print("json:", json.dumps({k: {"ms": v[0], "rate": v[1]} for k, v in out.items()}))
