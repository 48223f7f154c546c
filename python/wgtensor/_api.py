"""Where each function of include/wgtensor.h is reached from Python, beyond the op table
(_core.BOUND), and the ones deliberately not bound, with the reason. tests/test_binding.py
checks this against the header, so a new C function must be bound or listed here."""

# C function -> the Python name that reaches it ("Tensor.x" and "Context.x" are attributes).
ELSEWHERE = {
    "wgt_version": "library_version",
    "wgt_dtype_size": "Tensor.itemsize",
    "wgt_dtype_name": "asarray",  # names the type in conversion errors
    "wgt_f16_to_f32": "asarray", "wgt_f32_to_f16": "asarray",
    "wgt_context_create": "Context", "wgt_context_release": "Context",
    "wgt_context_backend": "Context.backend", "wgt_context_device_name": "Context.device_name",
    "wgt_context_status": "Context.check", "wgt_context_sync": "Context.sync",
    "wgt_context_describe": "Context.describe", "wgt_context_simulate_device_loss": "Context.simulate_device_loss",
    "wgt_list_adapters": "devices", "wgt_context_stats": "Context.stats", "wgt_context_trim": "Context.trim",
    "wgt_eval": "eval",
    "wgt_tensor_create": "empty", "wgt_tensor_write": "asarray", "wgt_zeros": "zeros", "wgt_ones": "ones",
    "wgt_full": "full", "wgt_arange": "arange", "wgt_rand_uniform": "random.uniform",
    "wgt_rand_normal": "random.normal", "wgt_scalar": "Tensor.__add__",
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
    "wgt_kernel_groups_for": "kernel", "wgt_kernel_dispatch": "kernel",
    "wgt_squeeze": "squeeze", "wgt_unsqueeze": "expand_dims", "wgt_split": "split", "wgt_pad": "pad",
}

# C function -> why it has no Python binding.
NOT_BOUND = {
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
}
