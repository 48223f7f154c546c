/*
 * The struct layouts of webgpu_api.h (and of the public structs the JS API fills) as this
 * compiler lays them out for wasm32, for the JS import table (web/src/webgpu_imports.js) and
 * web/wgtensor.js, which read and write these structs in wasm memory. The offsets come from offsetof on the very header the C code is compiled with, so
 * the JS side can never disagree with it: nothing here is typed by hand but the field names,
 * and a name that is not a field of its struct fails to compile.
 *
 * wgtjs_layout_names() is "Struct.field,Struct.field,...,Struct,..." (a bare struct name is
 * its sizeof) and wgtjs_layout_values() the numbers in the same order; a WGPULimits field's
 * number is its offset times 16 plus its width in bytes (4 or 8).
 */
#include <stddef.h>
#include <stdint.h>

#include "backend/webgpu/webgpu_api.h"
#include "wgtensor.h"

#define LIMIT_FIELDS(X)                                                                                            \
    X(maxTextureDimension1D) X(maxTextureDimension2D) X(maxTextureDimension3D) X(maxTextureArrayLayers)            \
    X(maxBindGroups) X(maxBindGroupsPlusVertexBuffers) X(maxBindingsPerBindGroup)                                   \
    X(maxDynamicUniformBuffersPerPipelineLayout) X(maxDynamicStorageBuffersPerPipelineLayout)                       \
    X(maxSampledTexturesPerShaderStage) X(maxSamplersPerShaderStage) X(maxStorageBuffersPerShaderStage)             \
    X(maxStorageTexturesPerShaderStage) X(maxUniformBuffersPerShaderStage) X(maxUniformBufferBindingSize)           \
    X(maxStorageBufferBindingSize) X(minUniformBufferOffsetAlignment) X(minStorageBufferOffsetAlignment)            \
    X(maxVertexBuffers) X(maxBufferSize) X(maxVertexAttributes) X(maxVertexBufferArrayStride)                       \
    X(maxInterStageShaderVariables) X(maxColorAttachments) X(maxColorAttachmentBytesPerSample)                      \
    X(maxComputeWorkgroupStorageSize) X(maxComputeInvocationsPerWorkgroup) X(maxComputeWorkgroupSizeX)              \
    X(maxComputeWorkgroupSizeY) X(maxComputeWorkgroupSizeZ) X(maxComputeWorkgroupsPerDimension) X(maxImmediateSize) \
    X(maxStorageBuffersInVertexStage) X(maxStorageTexturesInVertexStage) X(maxStorageBuffersInFragmentStage)        \
    X(maxStorageTexturesInFragmentStage)

#define FIELDS(F, S)                                                                                               \
    F(WGPUStringView, data) F(WGPUStringView, length) S(WGPUStringView)                                            \
    F(WGPUChainedStruct, next) F(WGPUChainedStruct, sType)                                                         \
    F(WGPUCallbackInfo, mode) F(WGPUCallbackInfo, callback) F(WGPUCallbackInfo, userdata1)                         \
    F(WGPUCallbackInfo, userdata2)                                                                                 \
    F(WGPUUncapturedErrorCallbackInfo, callback) F(WGPUUncapturedErrorCallbackInfo, userdata1)                     \
    F(WGPUUncapturedErrorCallbackInfo, userdata2)                                                                  \
    F(WGPUFutureWaitInfo, future) F(WGPUFutureWaitInfo, completed) S(WGPUFutureWaitInfo)                           \
    F(WGPURequestAdapterOptions, nextInChain) F(WGPURequestAdapterOptions, powerPreference)                        \
    F(WGPURequestAdapterOptions, forceFallbackAdapter) F(WGPURequestAdapterOptions, backendType)                   \
    F(WGPUDawnTogglesDescriptor, enabledToggleCount) F(WGPUDawnTogglesDescriptor, enabledToggles)                  \
    F(WGPUAdapterInfo, vendor) F(WGPUAdapterInfo, architecture) F(WGPUAdapterInfo, device)                         \
    F(WGPUAdapterInfo, description) F(WGPUAdapterInfo, backendType) F(WGPUAdapterInfo, adapterType)                \
    F(WGPUAdapterInfo, vendorID) F(WGPUAdapterInfo, deviceID) F(WGPUAdapterInfo, subgroupMinSize)                  \
    F(WGPUAdapterInfo, subgroupMaxSize)                                                                            \
    F(WGPUSupportedFeatures, featureCount) F(WGPUSupportedFeatures, features)                                      \
    F(WGPUDeviceDescriptor, requiredFeatureCount) F(WGPUDeviceDescriptor, requiredFeatures)                        \
    F(WGPUDeviceDescriptor, requiredLimits) F(WGPUDeviceDescriptor, deviceLostCallbackInfo)                        \
    F(WGPUDeviceDescriptor, uncapturedErrorCallbackInfo)                                                           \
    F(WGPUBufferDescriptor, usage) F(WGPUBufferDescriptor, size) F(WGPUBufferDescriptor, mappedAtCreation)         \
    F(WGPUShaderModuleDescriptor, nextInChain) F(WGPUShaderSourceWGSL, code)                                       \
    F(WGPUBindGroupLayoutEntry, binding) F(WGPUBindGroupLayoutEntry, visibility)                                   \
    F(WGPUBindGroupLayoutEntry, buffer) S(WGPUBindGroupLayoutEntry)                                                \
    F(WGPUBufferBindingLayout, type) F(WGPUBufferBindingLayout, hasDynamicOffset)                                  \
    F(WGPUBufferBindingLayout, minBindingSize)                                                                     \
    F(WGPUBindGroupLayoutDescriptor, entryCount) F(WGPUBindGroupLayoutDescriptor, entries)                         \
    F(WGPUBindGroupEntry, binding) F(WGPUBindGroupEntry, buffer) F(WGPUBindGroupEntry, offset)                     \
    F(WGPUBindGroupEntry, size) S(WGPUBindGroupEntry)                                                              \
    F(WGPUBindGroupDescriptor, layout) F(WGPUBindGroupDescriptor, entryCount) F(WGPUBindGroupDescriptor, entries)  \
    F(WGPUPipelineLayoutDescriptor, bindGroupLayoutCount) F(WGPUPipelineLayoutDescriptor, bindGroupLayouts)        \
    F(WGPUConstantEntry, key) F(WGPUConstantEntry, value) S(WGPUConstantEntry)                                     \
    F(WGPUComputePipelineDescriptor, layout) F(WGPUComputePipelineDescriptor, compute)                             \
    F(WGPUComputeState, module) F(WGPUComputeState, entryPoint) F(WGPUComputeState, constantCount)                 \
    F(WGPUComputeState, constants)                                                                                 \
    F(WGPUQuerySetDescriptor, type) F(WGPUQuerySetDescriptor, count)                                               \
    F(WGPUComputePassDescriptor, timestampWrites) F(WGPUPassTimestampWrites, querySet)                             \
    F(WGPUPassTimestampWrites, beginningOfPassWriteIndex) F(WGPUPassTimestampWrites, endOfPassWriteIndex)         \
    F(wgt_context_options, backend) F(wgt_context_options, adapter) F(wgt_context_options, quiet)                  \
    S(wgt_context_options) F(wgt_binding, name) F(wgt_binding, tensor) S(wgt_binding)                             \
    F(wgt_kernel_arg, name) F(wgt_kernel_arg, binding) F(wgt_kernel_arg, tensor) F(wgt_kernel_arg, dtype)          \
    F(wgt_kernel_arg, ndim) F(wgt_kernel_arg, shape) S(wgt_kernel_arg)                                             \
    F(wgt_kernel_binding_info, name) F(wgt_kernel_binding_info, type) F(wgt_kernel_binding_info, binding)          \
    F(wgt_kernel_binding_info, read_write) F(wgt_kernel_binding_info, uniform) S(wgt_kernel_binding_info)

#define LIMIT(f) FIELD(WGPULimits, f)

#define NAME_F(T, f) #T "." #f ","
#define NAME_S(T) #T ","
#define FIELD(T, f) NAME_F(T, f)
static const char names[] = FIELDS(NAME_F, NAME_S) LIMIT_FIELDS(LIMIT);
#undef FIELD

#define VALUE_F(T, f) (uint32_t)offsetof(T, f),
#define VALUE_S(T) (uint32_t)sizeof(T),
/* A limit's offset times 16 plus its width in bytes (4 or 8), so the JS side knows which
 * limits are 64-bit without a list of its own. */
#define FIELD(T, f) (uint32_t)(offsetof(T, f) * 16 + sizeof(((T *)0)->f)),
static const uint32_t values[] = {FIELDS(VALUE_F, VALUE_S) LIMIT_FIELDS(LIMIT)};
#undef FIELD

__attribute__((export_name("wgtjs_layout_names"))) const char *wgtjs_layout_names(void) { return names; }
__attribute__((export_name("wgtjs_layout_values"))) const uint32_t *wgtjs_layout_values(void) { return values; }
__attribute__((export_name("wgtjs_layout_count"))) uint32_t wgtjs_layout_count(void) {
    return sizeof values / sizeof *values;
}
