// Types of the wgtensor ES module (web/wgtensor.js). The op methods come from
// src/api_table.d.ts, generated from include/wgtensor.h by `make wasm`.
import type { ContextOps, Ops, TensorOps } from "./src/api_table.js";

export type DType = "f32" | "f16" | "i32" | "u32";
export type TypedData = Float32Array | Int32Array | Uint32Array | Uint16Array;

/** A failure of the library: its one-line message, and the status's name ("shape error", ...). */
export class WgtError extends Error {
  status: string;
}

export interface InitOptions {
  /** "auto" (WebGPU where it works, else the CPU), "webgpu" or "cpu". */
  backend?: "auto" | "webgpu" | "cpu";
  /** An adapter's index ("1") or a substring of its name. */
  adapter?: string | number | null;
  /** false: the notice on stderr when auto falls back to the CPU is printed. */
  quiet?: boolean;
  /** Node with the npm package `webgpu` only (a browser refuses it), off by default: Dawn's
   * unsafe features (allow_unsafe_apis, vulkan_enable_f16_on_nvidia, use_vulkan_memory_model),
   * for shader-f16 on NVIDIA and f16 matrix products through subgroup matrices. Chosen by
   * the first init of the process. */
  unsafeNvidiaF16?: boolean;
}
/** Loads the library (once; wgtensor.wasm beside the module) and creates a context. */
export function init(options?: InitOptions): Promise<Context>;

export interface Context extends ContextOps {}
export class Context {
  readonly backend: "webgpu" | "cpu";
  readonly deviceName: string;
  /** A tensor holding a copy of data; dtype from the array type (Uint16Array: f16 bits). */
  tensor(data: TypedData, shape?: number[], dtype?: DType | null): Tensor;
  /** Compiles what computes the named outputs from graph inputs (graphInput). */
  compile(outputs: Record<string, Tensor>): Promise<Graph>;
  /** Compiles a WGSL compute shader of the caller's (WebGPU contexts only). */
  kernel(wgsl: string, entryPoint?: string): Promise<Kernel>;
  /** Releases the context, its device and every tensor's storage. */
  dispose(): Promise<void>;
}

export class Graph {
  dispatch(inputs: Record<string, Tensor>, outputs: Record<string, Tensor>): Promise<void>;
  readonly launches: number;
  dispose(): void;
}

export interface KernelBinding { name: string; type: string; binding: number; readWrite: boolean; uniform: boolean }
/** A user WGSL kernel (see include/wgtensor.h, "user WGSL kernels"). */
export class Kernel {
  readonly bindings: KernelBinding[];
  groupsFor(n: number): [number, number, number];
  /** One dispatch: tensors by binding name, or {dtype, shape} for outputs it creates (returned by name). */
  dispatch(args: Record<string, Tensor | { dtype: DType; shape: number[] }>, params?: ArrayBufferView | ArrayBuffer | null,
    groups?: number[]): Record<string, Tensor>;
  dispose(): void;
}

export interface Tensor extends TensorOps {}
export class Tensor {
  readonly dtype: DType;
  readonly shape: number[];
  /** The elements, row-major (f16: Float16Array where the runtime has it, else Uint16Array bits). */
  read(): Promise<TypedData>;
  /** The elements as nested arrays in the tensor's shape. */
  toArray(): Promise<unknown>;
  /** Gives the storage back now (a FinalizationRegistry does it for forgotten tensors). */
  dispose(): void;
  /** Overwrites the elements with data, a typed array of the tensor's type. */
  write(data: TypedData): Promise<void>;
  /** Whether gradients flow through the tensor. */
  readonly needsGrad: boolean;
}

export const ops: Ops & {
  concat(tensors: Tensor[], axis?: number): Tensor;
  stack(tensors: Tensor[], axis?: number): Tensor;
  split(a: Tensor, axis: number, sizes: number[]): Tensor[];
  broadcastArrays(tensors: Tensor[]): Tensor[];
  meshgrid(tensors: Tensor[], indexingIJ?: number): Tensor[];
  /** Reads a back, so it waits. */
  nonzero(a: Tensor): Promise<Tensor[]>;
  einsum(subscripts: string, operands: Tensor[]): Tensor;
};

/** SGD (wgt_sgd) or AdamW (wgt_adamw) over whole parameters marked with requiresGrad(1). */
export class Optimizer {
  /** Records each parameter's update, in place. */
  step(): void;
  zeroGrad(): void;
  lr: number;
  dispose(): void;
}
export function sgd(params: Tensor[], lr: number, momentum?: number, weightDecay?: number): Optimizer;
export function adamw(params: Tensor[], lr: number, beta1?: number, beta2?: number, eps?: number, weightDecay?: number): Optimizer;
export function lrWarmupCosine(step: number, warmup: number, total: number, peak: number, minLr: number): number;
/** Scales the gradients to a global norm of at most maxNorm; resolves to the norm before. */
export function clipGradNorm(params: Tensor[], maxNorm: number): Promise<number>;
/** Runs fn with no gradients recorded. */
export function noGrad<T>(fn: () => T): T;
export const dtypes: DType[];
/** What the WebGPU import table holds: GPU buffers created and not yet destroyed. */
export function webgpuStats(): { buffersAlive: number };
