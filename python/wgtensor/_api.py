"""Where each function of include/wgtensor.h is reached from Python, beyond the op table
(_core.BOUND), and the ones deliberately not bound, with the reason. tests/test_binding.py
checks this against the header, so a new C function must be bound or listed here."""

# C function -> the Python name that reaches it ("Tensor.x" and "Context.x" are attributes).
ELSEWHERE = {
    "wgt_version": "library_version",
    "wgt_clip": "clip",  # with tensor bounds; scalar bounds go to wgt_clamp
    "wgt_dtype_size": "Tensor.itemsize",
    "wgt_dtype_name": "asarray",  # names the type in conversion errors
    "wgt_f16_to_f32": "asarray", "wgt_f32_to_f16": "asarray",
    "wgt_bf16_to_f32": "asarray", "wgt_f32_to_bf16": "asarray",  # asarray(x, dtype=bfloat16) rounds with it
    "wgt_context_create": "Context", "wgt_context_release": "Context",
    "wgt_context_backend": "Context.backend", "wgt_context_device_name": "Context.device_name",
    "wgt_context_status": "Context.check", "wgt_context_sync": "Context.sync",
    "wgt_context_describe": "Context.describe", "wgt_context_simulate_device_loss": "Context.simulate_device_loss",
    "wgt_list_adapters": "devices", "wgt_context_stats": "Context.stats", "wgt_context_trim": "Context.trim",
    "wgt_eval": "eval",
    "wgt_tensor_create": "empty", "wgt_tensor_write": "asarray", "wgt_zeros": "zeros", "wgt_ones": "ones",
    "wgt_full": "full", "wgt_arange": "arange", "wgt_rand_uniform": "random.uniform",
    "wgt_rand_normal": "random.normal", "wgt_rand_bits": "random.bits",
    "wgt_dropout_seeded": "dropout",  # when seed= is a uint32 tensor [2]
    "wgt_scalar": "Tensor.__add__",
    "wgt_release": "Tensor",  # when the Tensor object is freed
    "wgt_tensor_dtype": "Tensor.dtype", "wgt_tensor_ndim": "Tensor.ndim", "wgt_tensor_shape": "Tensor.shape",
    "wgt_tensor_strides": "Tensor.strides", "wgt_tensor_offset": "Tensor.offset", "wgt_tensor_numel": "Tensor.size",
    "wgt_tensor_nbytes": "Tensor.nbytes", "wgt_tensor_is_contiguous": "Tensor.is_contiguous",
    "wgt_tensor_context": "Tensor.ctx",
    "wgt_tensor_read": "Tensor.tobytes", "wgt_tensor_data": "Tensor.numpy", "wgt_tensor_data_mut": "asarray",
    "wgt_read_begin": "Tensor.numpy_async", "wgt_read_poll": "Read.done", "wgt_read_wait": "Read.result",
    "wgt_read_release": "Read",
    "wgt_graph_input": "compile", "wgt_graph_build": "compile", "wgt_graph_dispatch": "compile",
    "wgt_graph_launches": "compile.launches", "wgt_graph_release": "compile",
    "wgt_kernel_create": "kernel", "wgt_kernel_release": "kernel", "wgt_kernel_binding_count": "kernel",  # .bindings
    "wgt_kernel_binding": "kernel", "wgt_kernel_workgroup_size": "kernel",  # .bindings, .workgroup_size
    "wgt_kernel_groups_for": "kernel", "wgt_kernel_dispatch": "kernel", "wgt_kernel_set_cpu_fn": "kernel",  # cpu=
    "wgt_reshape_view": "reshape",  # copy=False
    "wgt_squeeze": "squeeze", "wgt_unsqueeze": "expand_dims", "wgt_split": "split", "wgt_pad": "pad",
    # autograd (_autograd.py, optim.py)
    "wgt_requires_grad": "Tensor.requires_grad_", "wgt_tensor_requires_grad": "Tensor.requires_grad",
    "wgt_backward": "Tensor.backward", "wgt_grad": "Tensor.grad", "wgt_zero_grad": "Tensor.zero_grad",
    "wgt_no_grad_begin": "no_grad", "wgt_no_grad_end": "no_grad", "wgt_detach": "Tensor.detach",
    "wgt_cross_entropy": "cross_entropy", "wgt_sgd": "optim.SGD", "wgt_adamw": "optim.AdamW",
    "wgt_optimizer_step": "optim.Optimizer.step", "wgt_optimizer_zero_grad": "optim.Optimizer.zero_grad",
    "wgt_optimizer_set_lr": "optim.Optimizer.lr", "wgt_optimizer_lr": "optim.Optimizer.lr",
    "wgt_optimizer_release": "optim.Optimizer",  # when the optimizer object is freed
    "wgt_lr_warmup_cosine": "lr_warmup_cosine", "wgt_clip_grad_norm": "clip_grad_norm",
    "wgt_save_npy": "save", "wgt_load_npy": "load", "wgt_save_safetensors": "save",
    "wgt_load_safetensors": "load", "wgt_safetensors_names": "load",
    # quantization (_quant.py, gguf.py)
    "wgt_quantize": "quantize", "wgt_dequantize": "dequantize", "wgt_matmul_quantized": "matmul_quantized",
    "wgt_kv_cache_append": "kv_cache_append", "wgt_dtype_block_elements": "q8_0.block_size",
    "wgt_dtype_block_bytes": "q8_0.block_bytes",
    "wgt_gguf_open": "gguf.open", "wgt_gguf_close": "gguf.File.close", "wgt_gguf_version": "gguf.File",  # .version
    "wgt_gguf_kv_count": "gguf.File", "wgt_gguf_kv_at": "gguf.File",  # .metadata
    "wgt_gguf_tensor_count": "gguf.File", "wgt_gguf_tensor_at": "gguf.File",  # .tensors
    "wgt_gguf_load": "gguf.File.load", "wgt_gguf_writer_create": "gguf.write", "wgt_gguf_writer_set": "gguf.write",
    "wgt_gguf_writer_add_tensor": "gguf.write", "wgt_gguf_writer_save": "gguf.write",
    "wgt_gguf_writer_release": "gguf.write",
}

# C function -> why it has no Python binding.
NOT_BOUND = {
    # x.astype(int64).sum() is the same computation (the cast is exact, the sum wraps modulo 2^64)
    "wgt_sum_dtype": "x.astype(wgtensor.int64).sum() computes the same (an exact cast, then the 64-bit sum)",
    "wgt_prod_dtype": "x.astype(wgtensor.int64).prod() computes the same",
    "wgt_cumsum_dtype": "cumsum(x.astype(wgtensor.int64)) computes the same",
    "wgt_last_error": "the exception raised for a failure carries the message",
    "wgt_last_status": "the exception's type, and its .status, carry the status",
    "wgt_clear_error": "the binding clears the pending error when it raises",
    "wgt_status_name": "the exception's .status is this name",
    "wgt_retain": "Python's reference counting holds tensors",
    "wgt_tensor_destroy": "freeing a storage that a NumPy view from numpy() still points into would crash the "
                          "interpreter; `del t` releases it",
    "wgt_tensor_usage": "tensors made from Python have the default usage (readable and writable)",
    "wgt_tensor_from_data": "asarray creates and writes instead (wgt_tensor_write goes to the device buffer "
                            "directly; from_data fills a host copy first)",
    "wgt_tensor_export_buffer": "a WGPUBuffer handle means nothing to Python without WebGPU bindings",
    "wgt_tensor_from_buffer": "a WGPUBuffer handle means nothing to Python without WebGPU bindings",
    "wgt_context_webgpu_device": "a WGPUDevice handle means nothing to Python without WebGPU bindings",
    "wgt_gguf_find_kv": "gguf.File.metadata is a dict (its lookup replaces this)",
    "wgt_gguf_find_tensor": "gguf.File.tensors is a dict (its lookup replaces this)",
    "wgt_index_select": "take (wgt_take) is its generalisation to indices of any shape",
}
